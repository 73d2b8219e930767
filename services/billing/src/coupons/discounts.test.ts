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
function store(c: Coupon, stored: Array<{ invoiceId: string; periods: Date[]; amount: number; periodAmounts?: number[] }>): CouponStore {
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
    // Each period its own allowance: P1's line takes P1's 200, P2's line P2's 500, stored per period.
    expect(i!.discounts).toEqual([{ discountId: 'disc_1', amount: 700, periods: [P1, P2], periodAmounts: [200, 500] }]);
    // A row written before amounts per period counts against its periods in order: 900 over [P1, P2] is 500 + 400.
    const after = new InvoiceDiscounts(
      store(coupon({ type: 'FIXED_AMOUNT', percentOff: null, amountOff: 500, currency: 'usd' }), [{ invoiceId: 'inv_0', periods: [P1, P2], amount: 900 }]),
    );
    const [j] = await after.forNew(conn, [invoice('inv_2', [[1000, P2]])], price);
    expect(j!.discounts).toEqual([{ discountId: 'disc_1', amount: 100, periods: [P2], periodAmounts: [100] }]);
  });

  it('never gives a FIXED_AMOUNT period what another period left: the cycle invoice after a create invoice that used P1', async () => {
    const c = coupon({ type: 'FIXED_AMOUNT', percentOff: null, amountOff: 500, currency: 'usd' });
    // The create invoice took all 500 of P1; the cycle invoice bills P1's usage (400) and P2's fee (1000).
    const d = new InvoiceDiscounts(store(c, [{ invoiceId: 'inv_0', periods: [P1], amount: 500, periodAmounts: [500] }]));
    const lines: Array<[number, Date]> = [
      [400, P1],
      [1000, P2],
    ];
    const [i] = await d.forNew(conn, [invoice('inv_1', lines)], price);
    expect(i!.discounts).toEqual([{ discountId: 'disc_1', amount: 500, periods: [P1, P2], periodAmounts: [0, 500] }]);
    // The per-line split: nothing on P1's line, 500 on P2's.
    const arithmetic = invoiceArithmetic({
      lines: lines.map(([amount], position) => ({ id: `l${position}`, position, lineType: 'CHARGE', priceId: 'price_a', amount })),
      discounts: [
        { discountId: 'disc_1', kind: 'FIXED_AMOUNT', remaining: 0, appliesTo: ['l0'] },
        { discountId: 'disc_1', kind: 'FIXED_AMOUNT', remaining: 500, appliesTo: ['l1'] },
      ],
    });
    expect(arithmetic.lines.map((l) => l.discountAmount)).toEqual([0, 500]);
    // Amounts stored per period are read exactly: P1 took 50 (its line was small), P2 300; a later invoice of P2 has 200 left.
    const later = new InvoiceDiscounts(store(c, [{ invoiceId: 'inv_0', periods: [P1, P2], amount: 350, periodAmounts: [50, 300] }]));
    const [j] = await later.forNew(conn, [invoice('inv_2', [[1000, P2]])], price);
    expect(j!.discounts).toEqual([{ discountId: 'disc_1', amount: 200, periods: [P2], periodAmounts: [200] }]);
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
    expect(repriced.discounts).toEqual([{ discountId: 'disc_1', amount: 400, periods: [P1], periodAmounts: [400] }]);
  });

  it('previews the next invoice with what it would take', async () => {
    const d = new InvoiceDiscounts(store(coupon({ appliesToPriceIds: ['price_b'] }), []));
    const seen: DiscountInput[][] = [];
    const previewed = await d.forPreview(
      conn,
      invoice('inv_up', [
        [1000, P1, 'price_a'],
        [999, P1, 'price_b'],
      ]),
      (i, inputs) => {
        seen.push(inputs);
        return price(i, inputs);
      },
    );
    expect(seen).toEqual([[{ discountId: 'disc_1', kind: 'PERCENTAGE', percent: '50', appliesTo: ['inv_up-l1'] }]]);
    expect(previewed.discounts).toEqual([{ discountId: 'disc_1', amount: 500, periods: [P1] }]);
  });
});
