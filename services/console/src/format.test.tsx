import { describe, expect, it } from '@jest/globals';
import { decimalMoney, minorToDecimal, money, quantity } from './format';

describe('quantity', () => {
  it('groups digits and keeps every decimal the API sent, without going through a float', () => {
    expect(quantity('1234567.5')).toBe('1,234,567.5');
    expect(quantity('6')).toBe('6');
    expect(quantity('0.000001')).toBe('0.000001');
    expect(quantity('12345678901234567.891')).toBe('12,345,678,901,234,567.891');
    expect(quantity('-1000.10')).toBe('-1,000.1');
    expect(quantity(1234)).toBe('1,234');
    expect(quantity(null)).toBe('–');
    expect(quantity('not a number')).toBe('not a number');
  });
});

describe('money', () => {
  it('shows minor units in the currency s format and digits', () => {
    expect(money(123457, 'usd')).toBe('$1,234.57');
    expect(money(-1000, 'usd')).toBe('-$10.00');
    expect(money(4900, 'jpy')).toBe('¥4,900');
    expect(money(12345, 'kwd')).toBe('KWD\u00a012.345');
    expect(money(5, 'eur')).toBe('€0.05');
    expect(money(null, 'usd')).toBe('–');
    expect(money(123456, 'us')).toBe('123,456 US (minor units)');
  });

  it('is exact for amounts past what a float holds in cents', () => {
    expect(minorToDecimal(9007199254740991, 2)).toBe('90071992547409.91');
    expect(money(9007199254740991, 'usd')).toBe('$90,071,992,547,409.91');
    expect(minorToDecimal(5, 3)).toBe('0.005');
    expect(minorToDecimal(-5, 2)).toBe('-0.05');
    expect(minorToDecimal(4900, 0)).toBe('4900');
  });
});

describe('decimalMoney', () => {
  it('shows a decimal amount with at least the currency s digits and every further one it has', () => {
    expect(decimalMoney('0.5', 'usd')).toBe('$0.50');
    expect(decimalMoney('0.00125', 'usd')).toBe('$0.00125');
    expect(decimalMoney('1234567.891', 'usd')).toBe('$1,234,567.891');
    expect(decimalMoney('12345678901234567.25', 'usd')).toBe('$12,345,678,901,234,567.25');
    expect(decimalMoney('50', 'jpy')).toBe('¥50');
    expect(decimalMoney(undefined, 'usd')).toBe('–');
    expect(decimalMoney('n/a', 'usd')).toBe('n/a USD');
  });
});
