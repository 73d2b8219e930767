export * from './domain';
export { usageLines } from './calculate';
export { fixedLine } from './fixed';
export { packagesFor } from './package';
export { tierIndexFor } from './tiered';
export { roundMinorUnits, sumAmounts, toMinorUnits } from './rounding';
