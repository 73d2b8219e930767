import { displayPrefix, generateKey, hashKey, sameHash } from './key';

describe('API key secrets', () => {
  it('generates distinct keys with the bsk_ prefix and 256 bits of randomness', () => {
    const a = generateKey();
    const b = generateKey();
    expect(a).toMatch(/^bsk_[A-Za-z0-9_-]{43}$/);
    expect(a).not.toBe(b);
  });

  it('stores only a SHA-256 hex digest and compares digests', () => {
    const key = generateKey();
    const hash = hashKey(key);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hash).not.toContain(key.slice(4));
    expect(sameHash(hash, hashKey(key))).toBe(true);
    expect(sameHash(hash, hashKey(generateKey()))).toBe(false);
    expect(displayPrefix(key)).toBe(key.slice(0, 10));
  });
});
