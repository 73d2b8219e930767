import { TokenBucketLimiter } from './rate-limit';

describe('TokenBucketLimiter', () => {
  it('lets a burst through, then asks to wait whole seconds, and refills at the rate', () => {
    let now = 0;
    const limiter = new TokenBucketLimiter(2, 3, () => now);
    expect([limiter.take('a'), limiter.take('a'), limiter.take('a')]).toEqual([0, 0, 0]);
    expect(limiter.take('a')).toBe(1);
    now += 500;
    expect(limiter.take('a')).toBe(0);
    expect(limiter.take('a')).toBe(1);
  });

  it('keeps one bucket per key', () => {
    const limiter = new TokenBucketLimiter(1, 1, () => 0);
    expect(limiter.take('tenant-a')).toBe(0);
    expect(limiter.take('tenant-a')).toBe(1);
    expect(limiter.take('tenant-b')).toBe(0);
  });

  it('never stores more than the burst', () => {
    let now = 0;
    const limiter = new TokenBucketLimiter(100, 2, () => now);
    now += 60_000;
    expect(limiter.take('a')).toBe(0);
    expect(limiter.take('a')).toBe(0);
    expect(limiter.take('a')).toBeGreaterThan(0);
  });

  it('gives back refunded tokens, never above the burst', () => {
    const limiter = new TokenBucketLimiter(1, 2, () => 0);
    expect(limiter.take('a')).toBe(0);
    expect(limiter.take('a')).toBe(0);
    expect(limiter.take('a')).toBe(1);
    limiter.refund('a');
    expect(limiter.take('a')).toBe(0);
    limiter.refund('a');
    limiter.refund('a');
    limiter.refund('a');
    expect([limiter.take('a'), limiter.take('a'), limiter.take('a')]).toEqual([0, 0, 1]);
  });

  it('keeps at most maxKeys buckets, dropping the least recently used one', () => {
    const limiter = new TokenBucketLimiter(1, 1, () => 0, 2);
    expect(limiter.take('a')).toBe(0);
    expect(limiter.take('b')).toBe(0);
    expect(limiter.take('a')).toBe(1);
    // A third key drops b (used least recently), not a: a stays empty, b comes back full.
    expect(limiter.take('c')).toBe(0);
    expect(limiter.take('a')).toBe(1);
    expect(limiter.take('b')).toBe(0);
  });
});
