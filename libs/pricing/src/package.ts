import { exact, toDecimalString as decimalString, type Exact } from '@billstream/money';
import type { LineAmount, PackageSpec } from './domain';
import { parseQuantity } from './quantity';
import { toMinorUnits } from './rounding';

/** Whole packages for a usage: usage / size, rounded UP (any started package counts) or DOWN. */
export function packagesFor(usage: Exact, spec: PackageSpec): Exact {
  const whole = usage.dividedToIntegerBy(spec.size);
  const rest = usage.minus(whole.times(spec.size));
  return spec.round === 'UP' && rest.gt(0) ? whole.plus(1) : whole;
}

/** PACKAGE: one line, quantity = packages, amount = packages x amount per package. */
export function packageLine(currency: string, amount: string, spec: PackageSpec, quantity: string, description: string): LineAmount {
  const packages = packagesFor(parseQuantity(quantity), spec);
  return {
    quantity: decimalString(packages),
    unitAmount: decimalString(exact(amount)),
    amount: toMinorUnits(packages.times(amount), currency),
    description: `${description} (${decimalString(packages)} x package of ${decimalString(exact(spec.size))}, rounded ${spec.round.toLowerCase()})`,
  };
}
