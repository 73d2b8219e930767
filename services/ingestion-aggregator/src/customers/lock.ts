/**
 * Advisory lock (class, key) of one tenant+environment, taken shared by every usage-event
 * batch and exclusively by a customer projection change, so that a change's back-fill of
 * `customer_id` sees every event batch committed before it, and later batches see the change.
 */
export const PROJECTION_LOCK = 0x6375_7374; // 'cust'

/** 32-bit FNV-1a of `tenant:environment`, as a signed int for pg_advisory_xact_lock(int, int). */
export function scopeLockKey(scope: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < scope.length; i += 1) {
    h ^= scope.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h | 0;
}

export function scopeOf(tenantId: string, environmentId: string): string {
  return `${tenantId}:${environmentId}`;
}
