export { isKnownCurrency, minorDigits, normalizeCurrency } from './currency';
export { ISO_4217_MINOR_DIGITS } from './iso4217';
export * from './prices';
export * from './plans';
export * from './views';
export * from './subscriptions';
export * from './routes';
export * from './invoices';
export * from './tasks';
