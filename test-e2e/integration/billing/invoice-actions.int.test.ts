import { createDb, type Db } from '@billstream/db';
import { startIntegrationStack, type IntegrationStack } from '../../support/stack';
import { creditNoteHelpers, type Invoice } from './credit-notes-support';

type Action = 'finalize' | 'pay' | 'credit' | 'void';
type Status = 'draft' | 'finalized' | 'paid' | 'voided';

/** What each status lists (docs/api/billing.md#available-actions, ADR 0062). */
const EXPECTED: Record<Status, Action[]> = {
  draft: ['finalize', 'void'],
  finalized: ['pay', 'credit', 'void'],
  paid: ['credit'],
  voided: [],
};
/** The 400 each action answers when it is not available: the field it names. */
const REFUSED_FIELD: Record<Action, string> = { finalize: 'status', pay: 'invoice_id', credit: 'invoice_id', void: 'status' };

/**
 * `available_actions` of invoices through the gateway, on the whole stack with real Postgres and
 * Kafka: each status lists its actions; every listed action succeeds, every other is refused
 * with 400 and writes nothing (the invoice, its payments, its notes and its events as they were).
 */
describe('invoice available_actions through the gateway (real Postgres and Kafka)', () => {
  let stack: IntegrationStack;
  let billingDb: Db;
  let walletDb: Db;
  let h: ReturnType<typeof creditNoteHelpers>;

  beforeAll(async () => {
    stack = await startIntegrationStack({ extra: { env: { BILLING_INTERVAL_MS: '0', WALLET_EXPIRY_INTERVAL_MS: '0' } } });
    billingDb = createDb({ databaseUrl: stack.database.url, schema: 'billing', poolMax: 2 });
    walletDb = createDb({ databaseUrl: stack.database.url, schema: 'wallet', poolMax: 2 });
    h = creditNoteHelpers(stack, billingDb, walletDb);
  });
  afterAll(async () => {
    await billingDb?.destroy();
    await walletDb?.destroy();
    await stack?.stop();
  });

  /** A fresh invoice of 10 usd in `status`. */
  async function inStatus(status: Status): Promise<Invoice & { available_actions: Action[] }> {
    const inv = await h.invoice(['10'], { finalize: status !== 'draft' });
    if (status === 'paid') expect((await stack.api.post('/v1/payments', { invoice_id: inv.id, amount: inv.amount_remaining, payment_method_type: 'OFFLINE' })).status).toBe(201);
    if (status === 'voided') expect((await stack.api.post(`/v1/invoices/${inv.id}/void`, {})).status).toBe(200);
    const got = (await h.getInvoice(inv.id)) as Invoice & { available_actions: Action[] };
    expect(got.status).toBe(status);
    return got;
  }

  function act(action: Action, i: Invoice) {
    switch (action) {
      case 'finalize':
        return stack.api.post(`/v1/invoices/${i.id}/finalize`, {});
      case 'void':
        return stack.api.post(`/v1/invoices/${i.id}/void`, {});
      case 'pay':
        return stack.api.post('/v1/payments', { invoice_id: i.id, amount: Math.max(1, i.amount_remaining), payment_method_type: 'OFFLINE' });
      case 'credit':
        return h.note({ invoice_id: i.id, amount: 100, refund: 'OFFLINE' });
    }
  }

  const written = async (i: Invoice) => ({
    ...(await h.snapshot(i.id)),
    payments: (await stack.api.get(`/v1/payments?invoice_id=${i.id}&limit=100`)).body.items,
    events: (await h.eventsOf(i.id)).length,
  });

  for (const status of Object.keys(EXPECTED) as Status[]) {
    it(`a ${status} invoice lists ${JSON.stringify(EXPECTED[status])} (GET and the list); each listed action succeeds, each other is refused with 400 and writes nothing`, async () => {
      const shown = await inStatus(status);
      expect(shown.available_actions).toEqual(EXPECTED[status]);
      const listed = (await stack.api.get(`/v1/invoices?customer_id=${shown.customer_id}&limit=10`)).body.items as Array<{ id: string; available_actions: Action[] }>;
      expect(listed.find((x) => x.id === shown.id)!.available_actions).toEqual(EXPECTED[status]);
      for (const action of ['finalize', 'pay', 'credit', 'void'] as Action[]) {
        const i = await inStatus(status);
        const before = await written(i);
        const res = await act(action, i);
        if (EXPECTED[status].includes(action)) {
          expect([200, 201]).toContain(res.status);
        } else {
          expect({ action, status: res.status }).toEqual({ action, status: 400 });
          expect(res.body.error.internal_error).toBe('validation_error');
          expect(res.body.error.details).toMatchObject({ field: REFUSED_FIELD[action] });
          expect(await written(i)).toEqual(before);
        }
      }
    }, 120_000);
  }

  it('an action taken changes the list: a draft finalized lists pay, credit and void; paid in full, credit only; all credited, nothing', async () => {
    const draft = await inStatus('draft');
    const fin = await stack.api.post(`/v1/invoices/${draft.id}/finalize`, {});
    expect(fin.body.available_actions).toEqual(['pay', 'credit', 'void']);
    expect((await stack.api.post('/v1/payments', { invoice_id: draft.id, amount: fin.body.amount_remaining, payment_method_type: 'OFFLINE' })).status).toBe(201);
    expect((await h.getInvoice(draft.id)) as unknown).toMatchObject({ status: 'paid', available_actions: ['credit'] });
    expect((await h.note({ invoice_id: draft.id, amount: fin.body.amount_remaining, refund: 'OFFLINE' })).status).toBe(201);
    const all = (await h.getInvoice(draft.id)) as Invoice & { available_actions: Action[] };
    expect(all).toMatchObject({ status: 'paid', available_actions: [] });
    const refused = await h.note({ invoice_id: draft.id, amount: 1, refund: 'OFFLINE' });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details).toMatchObject({ field: 'amount', creditable_amount: 0 });
  }, 60_000);
});
