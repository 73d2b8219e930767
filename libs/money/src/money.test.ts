import { exact, exactSum, EXACT_ZERO, isDecimalString, money, sum, toDecimalString } from './index';

describe('money', () => {
  it('is exact where floats are not', () => {
    expect(toDecimalString(money('0.1').plus('0.2'))).toBe('0.3');
    expect(toDecimalString(sum(['0.1', '0.2', '0.3']))).toBe('0.6');
    expect(toDecimalString(money('123456789012345678.123456789').times('3'))).toBe('370370367037037034.370370367');
  });
  it('writes canonical strings without exponents or trailing zeros', () => {
    expect(toDecimalString('1.50')).toBe('1.5');
    expect(toDecimalString('0.000000000000000001')).toBe('0.000000000000000001');
    expect(toDecimalString('-0')).toBe('0');
    expect(toDecimalString('1e21')).toBe('1000000000000000000000');
  });
  it('accepts only plain decimal strings', () => {
    for (const ok of ['0', '12', '12.5', '-3.25', '0.000000000000000001']) expect(isDecimalString(ok)).toBe(true);
    for (const bad of ['', '1e5', '01', '1.', '.5', 'abc', '1,5', ' 1']) expect(isDecimalString(bad)).toBe(false);
  });
  it('computes exactly beyond 40 digits with exact(), and writes every digit', () => {
    const credits = '1234567890123456789012345678.123456789012345678';
    const product = exact(credits).times('1.123456789012345678');
    expect(toDecimalString(product)).toBe('1386983677655845155404663934.666666667530864198527968299765279684');
    expect(toDecimalString(money(credits).times('1.123456789012345678'))).not.toBe(toDecimalString(product));
    expect(toDecimalString(exactSum([credits, '0.000000000000000001', '-1']))).toBe('1234567890123456789012345677.123456789012345679');
    expect(toDecimalString(EXACT_ZERO.minus(exact('0')))).toBe('0');
  });
});
