export * from './domain';
export { invoiceArithmetic } from './compute';
export { invoiceTotals } from './totals';
export { spreadByLargestRemainder } from './spread';
