import { exact } from '@billstream/money';
import { roundMinorUnits, sumAmounts } from '@billstream/pricing';
import {
  ArithmeticInputError,
  isNegativeLine,
  type ArithmeticInput,
  type ArithmeticLine,
  type DiscountAmount,
  type DiscountInput,
  type InvoiceArithmetic,
  type Offset,
} from './domain';
import { spreadByLargestRemainder } from './spread';

const PERCENT = /^(0|[1-9]\d*)(\.\d+)?$/;

/** A billing line being worked on: what it has left after each step. */
interface Open {
  line: ArithmeticLine;
  left: number;
  offset: number;
  discount: number;
}

/**
 * The arithmetic of an invoice's lines (docs/api/billing.md#invoice-arithmetic), in its one order, each
 * product rounded once, half up, to minor units:
 * (1) CHARGE and COMMITMENT_TRUE_UP lines bill their amount;
 * (2) each THRESHOLD_DEDUCTION offsets what the lines of its price have left, first line first;
 * (3) discounts, in the order given, take d from what their lines have left (PERCENTAGE: d =
 *     round(left × percent ÷ 100); FIXED_AMOUNT: d = min(remaining, left)), spread over the
 *     lines by what each has left (largest remainder);
 * (4) each PRORATION_CREDIT offsets what any billing line has left, in line order;
 * (5) net_amount = amount − offset_amount − discount_amount (0 on negative lines).
 * What negative lines cannot offset is `excess_credit`: no invoice and no line is negative.
 * Pure: the same input gives the same result.
 */
export function invoiceArithmetic(input: ArithmeticInput): InvoiceArithmetic {
  const lines = checkedLines(input.lines);
  const inOrder = [...lines].sort((a, b) => a.position - b.position);
  const open = new Map<string, Open>();
  for (const line of inOrder) if (!isNegativeLine(line.lineType)) open.set(line.id, { line, left: line.amount, offset: 0, discount: 0 });
  const billing = [...open.values()];
  const offsets: Offset[] = [];
  let unabsorbed = 0;

  for (const deduction of inOrder.filter((l) => l.lineType === 'THRESHOLD_DEDUCTION')) {
    const samePrice = billing.filter((o) => deduction.priceId !== null && o.line.priceId === deduction.priceId);
    unabsorbed += offset(deduction, samePrice, offsets);
  }
  const discounts = (input.discounts ?? []).map((d) => applyDiscount(d, open));
  for (const credit of inOrder.filter((l) => l.lineType === 'PRORATION_CREDIT')) unabsorbed += offset(credit, billing, offsets);

  return {
    lines: lines.map((line) => {
      const o = open.get(line.id);
      return o ? { id: line.id, offsetAmount: o.offset, discountAmount: o.discount, netAmount: o.left } : { id: line.id, offsetAmount: 0, discountAmount: 0, netAmount: 0 };
    }),
    offsets,
    subtotal: sumAmounts(lines),
    totalDiscount: sumAmounts(discounts),
    discounts,
    excessCredit: unabsorbed,
  };
}

/** A negative line takes what `targets` have left, in their order; answers what it could not place. */
function offset(negative: ArithmeticLine, targets: Open[], into: Offset[]): number {
  let need = Math.abs(negative.amount);
  for (const target of targets) {
    if (need === 0) break;
    const take = Math.min(need, target.left);
    if (take === 0) continue;
    target.left -= take;
    target.offset += take;
    need -= take;
    into.push({ fromLineId: negative.id, toLineId: target.line.id, amount: take });
  }
  return need;
}

function applyDiscount(d: DiscountInput, open: Map<string, Open>): DiscountAmount {
  const targets = [...new Set(d.appliesTo)]
    .map((id) => {
      const o = open.get(id);
      if (!o) throw new ArithmeticInputError(`discount ${d.discountId} applies to ${id}, which is not a CHARGE or COMMITMENT_TRUE_UP line of the invoice`);
      return o;
    })
    .sort((a, b) => a.line.position - b.line.position);
  const left = sumAmounts(targets.map((t) => ({ amount: t.left })));
  const amount = Math.min(discountOf(d, left), left);
  const parts = spreadByLargestRemainder(
    amount,
    targets.map((t) => t.left),
  );
  targets.forEach((t, i) => {
    t.left -= parts[i]!;
    t.discount += parts[i]!;
  });
  return { discountId: d.discountId, amount };
}

/** d of one discount on what its lines have left, rounded once, half up. */
function discountOf(d: DiscountInput, left: number): number {
  if (d.kind === 'PERCENTAGE') {
    if (!PERCENT.test(d.percent) || exact(d.percent).gt(100)) throw new ArithmeticInputError(`discount ${d.discountId}: percent ${d.percent} is not a decimal in [0, 100]`);
    return roundMinorUnits(exact(left).times(d.percent).div(100));
  }
  if (!Number.isSafeInteger(d.remaining) || d.remaining < 0) throw new ArithmeticInputError(`discount ${d.discountId}: remaining ${d.remaining} is not a minor-unit amount`);
  return d.remaining;
}

function checkedLines(lines: readonly ArithmeticLine[]): readonly ArithmeticLine[] {
  const ids = new Set<string>();
  for (const l of lines) {
    if (ids.has(l.id)) throw new ArithmeticInputError(`line ${l.id} appears twice`);
    ids.add(l.id);
    if (!Number.isSafeInteger(l.amount)) throw new ArithmeticInputError(`line ${l.id}: amount ${l.amount} is not an integer of minor units`);
    if (isNegativeLine(l.lineType) ? l.amount > 0 : l.amount < 0) {
      throw new ArithmeticInputError(`line ${l.id}: a ${l.lineType} line cannot have amount ${l.amount}`);
    }
  }
  return lines;
}
