import type { Conn } from '@billstream/db';
import { prorationFactor } from '../periods';
import type { Subscription } from '../subscriptions/domain';
import { commitmentOf, factorOf, withTrueUps, type DraftInvoice } from './commitments';
import { chargeLine, priceInvoice, type InvoiceLine } from './domain';
import type { InvoiceStore } from './store';

const MAR = new Date('2026-03-01T00:00:00Z');
const APR = new Date('2026-04-01T00:00:00Z');
const DAY = 86_400_000;

const sub = {
  id: 'sub_1',
  billingAnchor: MAR,
  currentPeriodStart: MAR,
  billingPeriod: 'MONTHLY',
  billingPeriodCount: 1,
  billingCycle: 'anniversary',
  timezone: 'UTC',
  commitmentAmount: 2000,
} as unknown as Subscription;

function line(position: number, amount: number, periodStart: Date, lineType: InvoiceLine['lineType'] = 'CHARGE'): InvoiceLine {
  return {
    id: `line_${periodStart.getTime()}_${position}_${amount}`,
    position,
    priceId: 'price_1',
    priceType: 'FIXED',
    meterId: null,
    description: 'x',
    quantity: '1',
    unitAmount: String(amount),
    ...chargeLine(amount),
    lineType,
    netAmount: amount < 0 ? 0 : amount,
    prorationFactor: null,
    prepaidCreditsApplied: 0,
    periodStart,
    periodEnd: null,
  };
}

function draft(id: string, lines: InvoiceLine[], closing?: DraftInvoice['closing']): DraftInvoice {
  return { id, subscriptionId: 'sub_1', currency: 'usd', periodStart: MAR, ...priceInvoice(lines), closing } as unknown as DraftInvoice;
}

/** A store whose stored invoices billed `stored` for March, recording what it was asked. */
function storeOf(stored: number) {
  const asked: Array<{ starts: number[]; except: string[] }> = [];
  const store = {
    periodCharges: async (_conn: Conn, _ids: string[], starts: Date[], except: string[]) => {
      asked.push({ starts: starts.map((d) => d.getTime()), except });
      return new Map([[`sub_1@${MAR.getTime()}`, stored]]);
    },
  } as unknown as InvoiceStore;
  return { store, asked };
}

const trueUps = (d: DraftInvoice | undefined) => (d?.lines ?? []).filter((l) => l.lineType === 'COMMITMENT_TRUE_UP').map((l) => l.amount);

describe('commitment true-ups (docs/api/billing.md#minimum-commitments)', () => {
  it('rounds the commitment times the factor once, half up', () => {
    expect(commitmentOf({ commitment: 2000, window: { start: MAR, end: APR } })).toBe(2000);
    expect(commitmentOf({ commitment: 333, window: { start: MAR, end: APR, factor: '0.500000000000' } })).toBe(167);
    expect(commitmentOf({ commitment: 333, window: { start: MAR, end: APR, factor: '1.000000000000' } })).toBe(333);
  });

  it('finds the factor of a stored window in the schedule: none for a whole period, the part it ran of a cut one', () => {
    expect(factorOf(sub, MAR, APR)).toBeUndefined();
    const cut = new Date(MAR.getTime() + 15 * DAY);
    expect(factorOf(sub, MAR, cut)).toBe(prorationFactor(15 * DAY, 31 * DAY));
  });

  it('counts stored lines, the batch’s earlier drafts and its own lines of the period, negative ones too, and no true-up', async () => {
    const { store, asked } = storeOf(300);
    const create = draft('inv_create', [line(0, 1000, MAR)]);
    const cycle = draft('inv_cycle', [line(0, 200, MAR), line(1, -50, MAR, 'PRORATION_CREDIT'), line(2, 1000, APR)], { commitment: 2000, window: { start: MAR, end: APR } });
    const [first, second] = await withTrueUps({} as Conn, store, [create, cycle]);
    expect(first).toBe(create);
    // 2000 − (300 stored + 1000 earlier in the batch + 200 − 50 of its own); April's 1000 is another period.
    expect(trueUps(second)).toEqual([550]);
    expect(second!.lines.at(-1)).toMatchObject({ priceId: null, priceType: 'FIXED', position: 3, periodStart: MAR, periodEnd: APR, prorationFactor: null, netAmount: 550 });
    expect(second!.subtotal).toBe(200 - 50 + 1000 + 550);
    expect(asked).toEqual([{ starts: [MAR.getTime()], except: ['inv_create', 'inv_cycle'] }]);
  });

  it('adds no line when the charges reach the commitment, drops a closing draft left with no line, and prorates a cut period', async () => {
    const { store } = storeOf(1000);
    const reached = draft('inv_a', [line(0, 1000, MAR)], { commitment: 2000, window: { start: MAR, end: APR } });
    const empty = draft('inv_b', [], { commitment: 500, window: { start: MAR, end: APR } });
    expect(await withTrueUps({} as Conn, store, [reached, empty])).toEqual([reached]);

    const cut = draft('inv_c', [], { commitment: 3000, window: { start: MAR, end: new Date(MAR.getTime() + 15 * DAY), factor: '0.500000000000' } });
    const [made] = await withTrueUps({} as Conn, storeOf(1000).store, [cut]);
    expect(trueUps(made)).toEqual([500]);
    expect(made!.lines[0]!.prorationFactor).toBe('0.500000000000');
  });

  it('asks nothing of the store when no draft closes a period with a commitment', async () => {
    const { store, asked } = storeOf(0);
    const plain = [draft('inv_p', [line(0, 100, MAR)])];
    expect(await withTrueUps({} as Conn, store, plain)).toBe(plain);
    expect(asked).toEqual([]);
  });
});
