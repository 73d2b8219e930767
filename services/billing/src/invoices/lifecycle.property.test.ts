import fc from 'fast-check';
import { draftOf } from '../testing/invoice-fixtures';
import { paymentStatusOf, type Invoice } from './domain';
import * as lifecycle from './lifecycle';

const NOW = new Date('2026-02-01T00:00:00Z');

/** One step a client or a job may take: a fraction (0..1) picks its amount from what the invoice allows. */
const step = fc.oneof(
  fc.record({ kind: fc.constant('finalize' as const), credit: fc.double({ min: 0, max: 1, noNaN: true }), postpaid: fc.double({ min: 0, max: 1, noNaN: true }) }),
  fc.record({ kind: fc.constant('pay' as const), part: fc.double({ min: 0, max: 1, noNaN: true }) }),
  fc.record({ kind: fc.constant('credit' as const), part: fc.double({ min: 0, max: 1, noNaN: true }), pre: fc.boolean() }),
  fc.record({ kind: fc.constant('uncredit' as const) }),
  fc.record({ kind: fc.constant('void' as const) }),
  fc.record({ kind: fc.constant('overdue' as const) }),
  fc.record({ kind: fc.constant('refunded' as const) }),
);
type Step = typeof step extends fc.Arbitrary<infer S> ? S : never;

/** ADR 0038's identities and the lifecycle's own: every total from the arithmetic, never negative, the status and payment status following the money. */
function expectIdentities(i: Invoice): void {
  expect(i.total).toBe(i.subtotal - i.totalDiscount + i.excessCredit - i.totalPrepaidCreditsApplied);
  expect(i.amountDue).toBe(i.total - i.prePaymentCreditNotesAmount);
  expect(i.amountRemaining).toBe(i.amountDue - i.amountPaid);
  for (const v of [i.total, i.amountDue, i.amountRemaining, i.amountPaid, i.prePaymentCreditNotesAmount, i.postPaymentCreditNotesAmount]) expect(v).toBeGreaterThanOrEqual(0);
  expect(i.totalPrepaidCreditsApplied).toBe(i.lines.reduce((s, l) => s + l.prepaidCreditsApplied, 0));
  for (const l of i.lines) expect(l.creditedAmount).toBeLessThanOrEqual(l.netAmount);
  if (i.status !== 'draft') expect(i.paymentStatus).toBe(paymentStatusOf(i.amountDue, i.amountPaid));
  if (i.status === 'paid') expect(i.amountRemaining).toBe(0);
  if (i.status === 'finalized') expect(i.amountRemaining).toBeGreaterThan(0);
}

/** The step's transition, or undefined when the invoice does not take it (refused, never half done). */
function apply(i: Invoice, s: Step, notes: lifecycle.NoteMoney[]): lifecycle.Transition | undefined {
  const pick = (max: number, f: number) => Math.min(max, Math.floor(max * f));
  switch (s.kind) {
    case 'finalize': {
      if (!lifecycle.canFinalize(i)) return undefined;
      const credits = new Map(i.lines.map((l) => [l.id, pick(l.netAmount, s.credit)]));
      const credited = i.lines.reduce((sum, l) => sum + credits.get(l.id)!, 0);
      const allocated = lifecycle.allocate(i, credits, pick(i.total - credited, s.postpaid)).invoice;
      return lifecycle.finalize(allocated, { invoiceNumber: 'N-1', now: NOW });
    }
    case 'pay': {
      const amount = Math.max(1, pick(i.amountRemaining, s.part));
      return lifecycle.canPay(i) ? lifecycle.applyPayment(i, amount, NOW) : undefined;
    }
    case 'credit': {
      if (!lifecycle.canCredit(i)) return undefined;
      const line = i.lines.find((l) => lifecycle.creditableOf(l) > 0)!;
      const amount = Math.max(1, pick(lifecycle.creditableOf(line), s.part));
      // What is due first (pre-payment), the rest money given back, as the credit-note split does.
      const pre = s.pre ? Math.min(amount, i.amountRemaining) : 0;
      const note = { lines: [{ invoiceLineItemId: line.id, amount }], prePaymentAmount: pre, postPaymentAmount: amount - pre };
      notes.push(note);
      return lifecycle.applyCreditNote(i, note, NOW);
    }
    case 'uncredit': {
      const k = notes.findIndex((n) => n.postPaymentAmount === 0);
      if (k < 0 || (i.status !== 'finalized' && i.status !== 'paid')) return undefined;
      return lifecycle.removeCreditNote(i, notes.splice(k, 1)[0]!, NOW);
    }
    case 'void':
      return lifecycle.canVoid(i) ? lifecycle.voidInvoice(i, NOW) : undefined;
    case 'overdue':
      return lifecycle.isOverdue(i, new Date(NOW.getTime() + 40 * 86_400_000)) ? lifecycle.markOverdue(i, new Date(NOW.getTime() + 40 * 86_400_000)) : undefined;
    case 'refunded':
      return i.status === 'voided' && i.refundState === 'pending' ? lifecycle.refunded(i, NOW) : undefined;
  }
}

describe('invoice lifecycle, any sequence of transitions (ADR 0038, 0062)', () => {
  it('keeps the arithmetic identities, moves statuses only as the table says, and lists an action exactly when its transition is taken', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 100_000 }), { minLength: 1, maxLength: 4 }), fc.array(step, { maxLength: 12 }), (amounts, steps) => {
        // Every invoice begins as `draft` makes it (what the store inserts).
        const made = lifecycle.draft(draftOf(amounts));
        expect(made.events).toEqual(['invoice.create.drafted']);
        let invoice: Invoice = made.invoice;
        const notes: lifecycle.NoteMoney[] = [];
        expectIdentities(invoice);
        for (const s of steps) {
          const before = invoice;
          const actions = lifecycle.availableActions(before);
          const t = apply(before, s, notes);
          if (s.kind === 'finalize') expect(t !== undefined).toBe(actions.includes('finalize'));
          if (s.kind === 'void') expect(t !== undefined).toBe(actions.includes('void'));
          if (s.kind === 'pay') expect(t !== undefined).toBe(actions.includes('pay'));
          if (s.kind === 'credit') expect(t !== undefined).toBe(actions.includes('credit'));
          if (!t) continue;
          expect(lifecycle.STATUS_TRANSITIONS[before.status]).toContain(t.invoice.status);
          invoice = t.invoice;
          expectIdentities(invoice);
        }
      }),
      { numRuns: 500 },
    );
  });
});
