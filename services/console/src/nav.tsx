import { href, type Route } from './router';

/** The sections the read pages of issue #33 add, and which one a route belongs to. */
const SECTIONS = [
  { name: 'Overview', route: { page: 'overview' }, pages: ['overview'] },
  { name: 'Plans', route: { page: 'plans' }, pages: ['plans', 'plan'] },
  { name: 'Meters', route: { page: 'meters' }, pages: ['meters', 'meter'] },
  { name: 'Events', route: { page: 'events' }, pages: ['events'] },
  { name: 'Tax rates', route: { page: 'tax-rates' }, pages: ['tax-rates'] },
  { name: 'Webhooks', route: { page: 'webhooks' }, pages: ['webhooks', 'webhook'] },
  { name: 'API keys', route: { page: 'api-keys' }, pages: ['api-keys'] },
] as const satisfies ReadonlyArray<{ name: string; route: Route; pages: ReadonlyArray<Route['page']> }>;

/** True when the route is one of these sections' pages (the customers and invoices links stay unmarked). */
export function inSections(route: Route): boolean {
  return SECTIONS.some((s) => (s.pages as ReadonlyArray<Route['page']>).includes(route.page));
}

export function SectionLinks({ route }: { route: Route }) {
  return (
    <>
      {SECTIONS.map((s) => (
        <a key={s.name} href={href(s.route)} aria-current={(s.pages as ReadonlyArray<Route['page']>).includes(route.page) ? 'page' : undefined}>
          {s.name}
        </a>
      ))}
    </>
  );
}
