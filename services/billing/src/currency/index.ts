export { isKnownCurrency, minorDigits, normalizeCurrency } from './currency';
export { ISO_4217_MINOR_DIGITS } from './iso4217';
