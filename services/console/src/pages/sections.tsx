import type { Api } from '../api';
import type { Route } from '../router';
import { ApiKeysPage } from './ApiKeys';
import { EventsPage } from './Events';
import { MeterPage, MetersPage } from './Meters';
import { OverviewPage } from './Overview';
import { PlanPage } from './Plan';
import { PlansPage } from './Plans';
import { TaxRatesPage } from './TaxRates';
import { WebhookPage } from './Webhook';
import { WebhooksPage } from './Webhooks';

type SectionRoute = Exclude<Route, { page: 'customers' | 'customer' | 'invoices' | 'invoice' }>;

/** The read pages of issue #33 beyond customers and invoices (their links are in nav.tsx). */
export function SectionPage({ api, route }: { api: Api; route: SectionRoute }) {
  switch (route.page) {
    case 'plans':
      return <PlansPage api={api} />;
    case 'plan':
      return <PlanPage key={route.id} api={api} id={route.id} />;
    case 'api-keys':
      return <ApiKeysPage api={api} />;
    case 'webhooks':
      return <WebhooksPage api={api} />;
    case 'webhook':
      return <WebhookPage key={route.id} api={api} id={route.id} />;
    case 'meters':
      return <MetersPage api={api} />;
    case 'meter':
      return <MeterPage key={route.id} api={api} id={route.id} />;
    case 'events':
      return <EventsPage api={api} />;
    case 'overview':
      return <OverviewPage api={api} />;
    case 'tax-rates':
      return <TaxRatesPage api={api} />;
  }
}
