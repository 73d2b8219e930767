import { readFileSync } from 'node:fs';
import path from 'node:path';
import { WEBHOOK_EVENT_NAMES, webhookEventSelector, type DomainEvent, type WebhookEventName } from './index';

const WEBHOOKS_DOC = path.resolve(__dirname, '../../../docs/api/webhooks.md');
const SECTION = '## Event names and the operations that emit them';

/** The rows of the event table of docs/api/webhooks.md: the name and what emits it. */
function documentedEvents(): Array<{ name: string; emittedBy: string }> {
  const doc = readFileSync(WEBHOOKS_DOC, 'utf8');
  const start = doc.indexOf(SECTION);
  expect(start).toBeGreaterThanOrEqual(0);
  const rest = doc.slice(start + SECTION.length);
  const section = rest.slice(0, rest.search(/^## /m));
  return section
    .split('\n')
    .filter((line) => /^\| `[^`]+` \|/.test(line))
    .map((line) => {
      const [name, emittedBy] = line.split('|').slice(1, 3).map((cell) => cell.trim());
      return { name: name.replace(/`/g, ''), emittedBy };
    });
}

describe('webhook event names', () => {
  it('are the 44 names of the spec (40, and the four reservation events of part 3), each once', () => {
    expect(WEBHOOK_EVENT_NAMES).toHaveLength(44);
    expect(new Set(WEBHOOK_EVENT_NAMES).size).toBe(44);
  });

  it('docs/api/webhooks.md lists every name, once, and nothing else', () => {
    const names = documentedEvents().map((e) => e.name);
    expect(new Set(names).size).toBe(names.length);
    expect([...names].sort()).toEqual([...WEBHOOK_EVENT_NAMES].sort());
  });

  it('docs/api/webhooks.md says for every name what emits it, or that it is not emitted yet', () => {
    for (const { name, emittedBy } of documentedEvents()) {
      const said = emittedBy === '**not emitted yet**' || /`(POST|PUT|PATCH|DELETE) \/v1\/|the period job|the wallet's reservation expiry job/.test(emittedBy);
      expect({ name, said }).toEqual({ name, said: true });
    }
  });

  it('endpoints subscribe to the names of the list, or to *', () => {
    expect(webhookEventSelector.safeParse('invoice.update.finalized').success).toBe(true);
    expect(webhookEventSelector.safeParse('*').success).toBe(true);
    expect(webhookEventSelector.safeParse('invoice.paid').success).toBe(false);
  });

  it('a misspelt name does not compile', () => {
    const good: WebhookEventName = 'customer.created';
    // @ts-expect-error 'customer.craeted' is not a WebhookEventName
    const misspelt: WebhookEventName = 'customer.craeted';
    const event: Pick<DomainEvent, 'type'> = {
      // @ts-expect-error a published event carries one of the names only
      type: 'wallet.balance.dropped',
    };
    expect([good, misspelt, event.type]).toHaveLength(3);
  });
});
