import { LRUCache } from 'lru-cache';

interface Bucket {
  tokens: number;
  updated: number;
}

/** Buckets kept at most: past it the least recently used one is dropped (it comes back full). */
export const MAX_BUCKETS = 100_000;

/**
 * Token bucket per key (a tenant, a source address): `ratePerSecond` tokens flow in, at most
 * `burst` are kept. `take` answers 0 when the call may go on, else the whole seconds to wait.
 * At most `maxKeys` buckets are kept, least recently used dropped first (ADR 0032), so keys an
 * attacker chooses (addresses) cannot grow memory without bound.
 */
export class TokenBucketLimiter {
  private readonly buckets: LRUCache<string, Bucket>;

  constructor(
    private readonly ratePerSecond: number,
    private readonly burst: number,
    private readonly now: () => number = () => Date.now(),
    maxKeys = MAX_BUCKETS,
  ) {
    this.buckets = new LRUCache({ max: maxKeys });
  }

  take(key: string, cost = 1): number {
    const bucket = this.refill(key);
    if (bucket.tokens >= cost) {
      bucket.tokens -= cost;
      return 0;
    }
    return Math.max(1, Math.ceil((cost - bucket.tokens) / this.ratePerSecond));
  }

  /** Gives back tokens a call took and turned out not to need (never above the burst). */
  refund(key: string, cost = 1): void {
    const bucket = this.refill(key);
    bucket.tokens = Math.min(this.burst, bucket.tokens + cost);
  }

  private refill(key: string): Bucket {
    const now = this.now();
    let bucket = this.buckets.get(key);
    if (!bucket) {
      bucket = { tokens: this.burst, updated: now };
      this.buckets.set(key, bucket);
    }
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.updated) / 1000) * this.ratePerSecond);
    bucket.updated = now;
    return bucket;
  }
}
