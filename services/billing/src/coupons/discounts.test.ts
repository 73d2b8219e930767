import { invoiceArithmetic, type DiscountInput } from '../invoice-arithmetic';
import { InvoiceDiscounts, type DiscountedInvoice } from './discounts';
import type { Coupon, Discount } from './domain';
import type { CouponStore } from './store';

const P1 = new Date('2026-01-01T00:00:00Z');
const P2 = new Date('2026-02-01T00:00:00Z');
const P3 = new Date('2026-03-01T00:00:00Z');

function coupon(over: Partial<Coupon>): Coupon {
  const at = new Date('2025-12-01T00:00:00Z');
  return {
    id: 'coup_1',
    tenantId: 't',
    environmentId: 'e',
    name: 'c',
    code: null,
    type: 'PERCENTAGE',
    percentOff: '50',
    amountOff: null,
    currency: null,
    duration: 'FOREVER',
    durationInPeriods: null,
    appliesToPriceIds: null,
    maxRedemptions: null,
    redeemBy: null,
    timesRedeemed: 1,
    metadata: {},
    status: 'active',
    archivedAt: null,
    version: 1,
    createdAt: at,
    updatedAt: at,
    ...over,
  };
}

const discount: Discount = { id: 'disc_1', tenantId: 't', environmentId: 'e', subscriptionId: 'sub_1', couponId: 'coup_1', position: 0, removedAt: null, createdAt: P1 };

type Line = DiscountedInvoice['lines'][number] & { amount: number };
interface TestInvoice extends DiscountedInvoice {
  lines: Line[];
}

function invoice(id: string, lines: Array<[number, Date, string?]>, discounts: TestInvoice['discounts'] = []): TestInvoice {
  return {
    id,
    subscriptionId: 'sub_1',
    periodStart: lines[0]![1],
    lines: lines.map(([amount, periodStart, priceId], i) => ({ id: `${id}-l${i}`, lineType: 'CHARGE', priceId: priceId ?? 'price_a', periodStart, amount })),
    discounts,
  };
}

/** What the maker does: the arithmetic's amounts for the inputs. */
const price = (i: TestInvoice, inputs: DiscountInput[]): TestInvoice => ({
  ...i,
  discounts: invoiceArithmetic({ lines: i.lines.map((l, position) => ({ ...l, position })), discounts: inputs }).discounts,
});

/** A store of one discount and the invoice rows already carrying it. */
function store(c: Coupon, stored: Array<{ invoiceId: string; periods: Date[]; amount: number }>): CouponStore {
  return {
    discountsOfMany: async () => [{ discount, coupon: c }],
    discountsOf: async () => [{ discount, coupon: c }],
    uses: async () => stored.map((s) => ({ ...s, discountId: discount.id })),
    overridesOf: async () => [],
  } as unknown as CouponStore;
}

const conn = {} as never;

describe('InvoiceDiscounts', () => {
  it('counts billed periods by the periods lines bill: a ONCE coupon on an ADVANCE plan discounts the first period only', async () => {
    const d = new InvoiceDiscounts(store(coupon({ duration: 'ONCE' }), []));
    // The creation's invoice bills P1 in advance; the cycle invoice of P1 bills P2 in advance (its period_start is still P1).
    const [first, cycle] = await d.forNew(conn, [invoice('inv_1', [[1000, P1]]), { ...invoice('inv_2', [[1000, P2]]), periodStart: P1 }], price);
    expect(first!.discounts).toEqual([{ discountId: 'disc_1', amount: 500, periods: [P1] }]);
    expect(cycle!.discounts).toEqual([]);
  });

  it('stops a REPEATING coupon after its periods, counting those earlier invoices carry; a covered period keeps taking it', async () => {
    const d = new InvoiceDiscounts(store(coupon({ duration: 'REPEATING', durationInPeriods: 2 }), [{ invoiceId: 'inv_0', periods: [P1], amount: 10 }]));
    // An ARREAR line of P1 (covered already), the ADVANCE lines of P2 (admitted) and P3 (none left).
    const [i] = await d.forNew(
      conn,
      [
        invoice('inv_1', [
          [200, P1],
          [400, P2],
          [800, P3],
        ]),
      ],
      price,
    );
    expect(i!.discounts).toEqual([{ discountId: 'disc_1', amount: 300, periods: [P1, P2] }]);
  });

  it('gives a FIXED_AMOUNT coupon per period what earlier invoices of that period left, each period at most amount_off', async () => {
    // amount_off 500: an earlier invoice took 300 in P1, so P1 has 200 left and P2 all 500.
    const d = new InvoiceDiscounts(store(coupon({ type: 'FIXED_AMOUNT', percentOff: null, amountOff: 500, currency: 'usd' }), [{ invoiceId: 'inv_0', periods: [P1], amount: 300 }]));
    const [i] = await d.forNew(
      conn,
      [
        invoice('inv_1', [
          [400, P1],
          [1000, P2],
        ]),
      ],
      price,
    );
    expect(i!.discounts).toEqual([{ discountId: 'disc_1', amount: 700, periods: [P1, P2] }]);
    // An invoice of two periods counts against them in order: 900 over [P1, P2] is 500 + 400.
    const after = new InvoiceDiscounts(
      store(coupon({ type: 'FIXED_AMOUNT', percentOff: null, amountOff: 500, currency: 'usd' }), [{ invoiceId: 'inv_0', periods: [P1, P2], amount: 900 }]),
    );
    const [j] = await after.forNew(conn, [invoice('inv_2', [[1000, P2]])], price);
    expect(j!.discounts).toEqual([{ discountId: 'disc_1', amount: 100, periods: [P2] }]);
  });

  it('sees earlier invoices of the same batch, in order', async () => {
    const d = new InvoiceDiscounts(store(coupon({ type: 'FIXED_AMOUNT', percentOff: null, amountOff: 500, currency: 'usd' }), []));
    const out = await d.forNew(conn, [invoice('inv_1', [[300, P1]]), invoice('inv_2', [[300, P1]]), invoice('inv_3', [[300, P1]])], price);
    expect(out.map((i) => i.discounts.map((x) => x.amount))).toEqual([[300], [200], [0]]);
  });

  it('recomputes an invoice on the periods it carries, its own stored amount replaced, not added to', async () => {
    const c = coupon({ type: 'FIXED_AMOUNT', percentOff: null, amountOff: 500, currency: 'usd' });
    // The stored row of inv_1 itself (300) is not a use by another invoice; inv_0 took 100 of P1.
    const d = new InvoiceDiscounts(
      store(c, [
        { invoiceId: 'inv_0', periods: [P1], amount: 100 },
        { invoiceId: 'inv_1', periods: [P1], amount: 300 },
      ]),
    );
    const repriced = await d.forRecompute(conn, invoice('inv_1', [[1000, P1]], [{ discountId: 'disc_1', amount: 300, periods: [P1] }]), price);
    expect(repriced.discounts).toEqual([{ discountId: 'disc_1', amount: 400, periods: [P1] }]);
  });

  it('previews the next invoice with what it would take', async () => {
    const d = new InvoiceDiscounts(store(coupon({ appliesToPriceIds: ['price_b'] }), []));
    const inputs = await d.forPreview(
      conn,
      invoice('inv_up', [
        [1000, P1, 'price_a'],
        [999, P1, 'price_b'],
      ]),
    );
    expect(inputs).toEqual([{ discountId: 'disc_1', kind: 'PERCENTAGE', percent: '50', appliesTo: ['inv_up-l1'] }]);
  });
});
