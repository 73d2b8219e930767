interface Bucket {
  tokens: number;
  updated: number;
}

/**
 * Token bucket per key (tenant): `ratePerSecond` tokens flow in, at most `burst` are kept.
 * `take` answers 0 when the call may go on, else the whole seconds to wait.
 */
export class TokenBucketLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly ratePerSecond: number,
    private readonly burst: number,
    private readonly now: () => number = () => Date.now(),
  ) {}

  take(key: string, cost = 1): number {
    const now = this.now();
    const bucket = this.buckets.get(key) ?? { tokens: this.burst, updated: now };
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.updated) / 1000) * this.ratePerSecond);
    bucket.updated = now;
    this.buckets.set(key, bucket);
    if (bucket.tokens >= cost) {
      bucket.tokens -= cost;
      return 0;
    }
    return Math.max(1, Math.ceil((cost - bucket.tokens) / this.ratePerSecond));
  }
}
