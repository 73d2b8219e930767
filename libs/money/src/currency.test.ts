import { ValidationError } from '@billstream/errors';
import { isKnownCurrency, minorDigits, normalizeCurrency } from './currency';
import { ISO_4217_MINOR_DIGITS } from './iso4217';

describe('ISO 4217 table', () => {
  it('gives the minor digits of List One', () => {
    expect(minorDigits('usd')).toBe(2);
    expect(minorDigits('eur')).toBe(2);
    expect(minorDigits('jpy')).toBe(0);
    expect(minorDigits('krw')).toBe(0);
    expect(minorDigits('isk')).toBe(0);
    expect(minorDigits('kwd')).toBe(3);
    expect(minorDigits('bhd')).toBe(3);
    expect(minorDigits('iqd')).toBe(3);
    expect(minorDigits('clf')).toBe(4);
    expect(minorDigits('uyw')).toBe(4);
    expect(minorDigits('xcg')).toBe(2);
  });

  it('is the complete list: 166 codes of the 2024-06-25 edition with a minor unit, plus xcg', () => {
    const codes = Object.keys(ISO_4217_MINOR_DIGITS);
    expect(codes).toHaveLength(167);
    expect(codes.every((c) => /^[a-z]{3}$/.test(c))).toBe(true);
    const byDigits = Object.values(ISO_4217_MINOR_DIGITS).reduce<Record<number, number>>((acc, d) => ({ ...acc, [d]: (acc[d] ?? 0) + 1 }), {});
    expect(byDigits).toEqual({ 0: 17, 2: 141, 3: 7, 4: 2 });
  });

  it('writes codes in lower case and accepts any case on input', () => {
    expect(normalizeCurrency('USD')).toBe('usd');
    expect(normalizeCurrency('Jpy')).toBe('jpy');
    expect(minorDigits('KWD')).toBe(3);
  });

  it('rejects unknown codes, withdrawn codes and codes without a minor unit with a ValidationError on currency', () => {
    for (const bad of ['abc', 'us', 'usdd', '', 'xau', 'xxx', 'xts', 'xdr', 'hrk', 'zwl', 'sll', ' usd', 'u$d', 'constructor', 'toString']) {
      expect(isKnownCurrency(bad)).toBe(false);
      let thrown: unknown;
      try {
        minorDigits(bad);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(ValidationError);
      expect((thrown as ValidationError).details).toEqual({ field: 'currency' });
    }
  });
});
