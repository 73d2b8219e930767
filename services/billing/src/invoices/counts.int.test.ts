import { newId } from '@billstream/ids';
import { CTX, startBillingHarness, type BillingHarness } from '../testing/harness';
import type { Invoice } from './domain';
import * as lifecycle from './lifecycle';
import { InvoiceStore } from './store';

/**
 * The list's `total` without a customer or subscription filter comes from invoice_counts
 * (statement triggers); it must always equal a count of the rows, whatever writes them.
 */
describe('invoice list totals (real Postgres)', () => {
  let h: BillingHarness;
  const store = new InvoiceStore();
  const other = { ...CTX, tenantId: 'tenant-other' };

  beforeAll(async () => {
    h = await startBillingHarness('2026-03-01T00:00:00Z');
  });
  afterAll(async () => {
    await h?.stop();
  });

  function invoice(scope: typeof CTX, customerId: string, key: string): Invoice {
    const now = new Date('2026-03-01T00:00:00Z');
    return {
      id: newId('invoice'),
      tenantId: scope.tenantId,
      environmentId: scope.environmentId,
      customerId,
      subscriptionId: null,
      subscriptionCustomerId: null,
      billingReason: 'CREDIT_PURCHASE',
      sequence: '',
      sourceKey: key,
      source: null,
      status: 'draft',
      paymentStatus: 'pending',
      currency: 'usd',
      periodStart: null,
      periodEnd: null,
      paymentTermsDays: 0,
      dueDate: null,
      overdue: false,
      subtotal: 100,
      totalDiscount: 0,
      discounts: [],
      excessCredit: 0,
      totalPrepaidCreditsApplied: 0,
      total: 100,
      prePaymentCreditNotesAmount: 0,
      postPaymentCreditNotesAmount: 0,
      amountDue: 100,
      amountPaid: 0,
      amountRemaining: 100,
      hostedInvoiceUrl: null,
      invoicePdfUrl: null,
      invoiceNumber: null,
      finalizeAfter: now,
      frozenAt: null,
      finalizedAt: null,
      voidedAt: null,
      refundState: null,
      settleState: null,
      lines: [],
      version: 1,
      createdAt: now,
      updatedAt: now,
    };
  }

  async function expectTotals(scope: typeof CTX): Promise<void> {
    for (const status of [undefined, 'draft', 'finalized', 'paid', 'voided'] as const) {
      for (const customerId of [undefined, 'cust_a']) {
        const listed = await store.list(h.db, scope, { status, customerIds: customerId ? [customerId] : undefined, limit: 1, offset: 0 });
        const counted = await h
          .db('invoices')
          .where({ tenant_id: scope.tenantId, environment_id: scope.environmentId, ...(status ? { status } : {}), ...(customerId ? { customer_id: customerId } : {}) })
          .count({ n: '*' });
        expect([status, customerId, listed.total]).toEqual([status, customerId, Number(counted[0].n)]);
      }
    }
  }

  it('follows inserts, a repeated insert, status changes and lease updates, per tenant', async () => {
    const made: Invoice[] = [];
    await h.db.transaction(async (trx) => {
      for (let i = 0; i < 6; i++) {
        const inv = invoice(CTX, i % 2 === 0 ? 'cust_a' : 'cust_b', `k${i}`);
        expect(await store.insert(trx, lifecycle.draft(inv).invoice)).toBe(true);
        made.push(inv);
      }
      // A key already taken writes nothing and counts nothing.
      expect(await store.insert(trx, lifecycle.draft(invoice(CTX, 'cust_a', 'k0')).invoice)).toBe(false);
      expect(await store.insert(trx, lifecycle.draft(invoice(other, 'cust_a', 'k0')).invoice)).toBe(true);
    });
    await expectTotals(CTX);
    await expectTotals(other);

    await h.db.transaction(async (trx) => {
      const at = new Date('2026-03-01T00:00:00Z');
      const finalized = (i: Invoice) => lifecycle.finalize(lifecycle.allocate(i, new Map(), 0).invoice, { invoiceNumber: `N-${i.id}`, now: at }).invoice;
      await store.save(trx, finalized(made[0]!));
      await store.save(trx, lifecycle.applyPayment(finalized(made[1]!), 100, at).invoice);
      await store.save(trx, lifecycle.voidInvoice(made[2]!, at).invoice);
      // A change that keeps the status (a reprice, an overdue mark) counts nothing.
      await store.save(trx, lifecycle.reprice(made[3]!, made[3]!, at).invoice);
    });
    await store.claim(h.db, 'drafts', new Date('2026-03-02T00:00:00Z'), 60_000, 10);
    await expectTotals(CTX);
    await expectTotals(other);
    const all = await store.list(h.db, CTX, { limit: 50, offset: 0 });
    expect(all.total).toBe(6);
    expect(all.items).toHaveLength(6);
  });
});
