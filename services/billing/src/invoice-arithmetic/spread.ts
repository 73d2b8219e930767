import { exact, exactSum } from '@billstream/money';
import { ArithmeticInputError } from './domain';

/**
 * Splits `total` minor units over parts in proportion to `weights` (what each part has left),
 * by largest remainder: each part first gets floor(total × weight ÷ Σ weights), then the units
 * still to give go one each to the parts with the largest remainders, the first part first on a
 * tie. The parts sum to `total`, and with total <= Σ weights no part exceeds its weight (a part
 * of weight 0 gets 0). Integers are multiplied exactly (`Exact`), so weights up to 2^53 are safe.
 */
export function spreadByLargestRemainder(total: number, weights: readonly number[]): number[] {
  if (!Number.isSafeInteger(total) || total < 0) throw new ArithmeticInputError(`cannot spread ${total}: not a minor-unit amount`);
  if (weights.some((w) => !Number.isSafeInteger(w) || w < 0)) throw new ArithmeticInputError(`cannot spread over weights ${weights.join(', ')}`);
  const whole = exactSum([...weights]);
  if (total === 0) return weights.map(() => 0);
  if (whole.lt(total)) throw new ArithmeticInputError(`cannot spread ${total} over ${whole.toFixed()}: more than the parts have`);
  const shares = weights.map((w) => {
    const product = exact(total).times(w);
    return { floor: product.divToInt(whole).toNumber(), remainder: product.mod(whole) };
  });
  let left = total - shares.reduce((s, p) => s + p.floor, 0);
  const order = shares.map((_, i) => i).sort((a, b) => shares[b]!.remainder.comparedTo(shares[a]!.remainder) || a - b);
  const parts = shares.map((s) => s.floor);
  for (const i of order) {
    if (left === 0) break;
    parts[i]! += 1;
    left -= 1;
  }
  return parts;
}
