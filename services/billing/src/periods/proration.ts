/**
 * The proration factor of a part of a period: part / whole, 12 decimals, half up, exact
 * (integer arithmetic on milliseconds; for whole seconds the same as seconds / seconds).
 */
export function prorationFactor(partMs: number, wholeMs: number): string {
  if (!Number.isSafeInteger(partMs) || !Number.isSafeInteger(wholeMs) || wholeMs <= 0 || partMs < 0 || partMs > wholeMs) {
    throw new RangeError(`a proration needs 0 <= part (${partMs}) <= whole (${wholeMs}) and whole > 0`);
  }
  const scaled = (2n * BigInt(partMs) * 10n ** 12n + BigInt(wholeMs)) / (2n * BigInt(wholeMs));
  const digits = scaled.toString().padStart(13, '0');
  return `${digits.slice(0, -12)}.${digits.slice(-12)}`;
}
