import { prorationFactor } from './proration';

describe('prorationFactor', () => {
  it('is part / whole with 12 decimals, half up, exact', () => {
    expect(prorationFactor(1, 3)).toBe('0.333333333333');
    expect(prorationFactor(2, 3)).toBe('0.666666666667');
    expect(prorationFactor(1, 8)).toBe('0.125000000000');
    expect(prorationFactor(0, 5)).toBe('0.000000000000');
    expect(prorationFactor(5, 5)).toBe('1.000000000000');
    expect(prorationFactor(1, 2_000_000_000_000)).toBe('0.000000000001'); // 0.0000000000005: half up
    expect(prorationFactor(1, 2_000_000_000_001)).toBe('0.000000000000');
    expect(prorationFactor(17 * 86_400_000, 31 * 86_400_000)).toBe('0.548387096774');
  });

  it('refuses a part outside the whole', () => {
    expect(() => prorationFactor(6, 5)).toThrow(RangeError);
    expect(() => prorationFactor(-1, 5)).toThrow(RangeError);
    expect(() => prorationFactor(0, 0)).toThrow(RangeError);
  });
});
