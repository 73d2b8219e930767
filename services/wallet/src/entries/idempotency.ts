import { createHash } from 'node:crypto';
import { IdempotencyConflictError } from '@billstream/errors';
import type { LedgerEntry } from './domain';

/** Fingerprint of a normalized request, stored with the entry its idempotency key made. */
export function requestHash(request: Record<string, unknown>): string {
  return createHash('sha256').update(JSON.stringify(request)).digest('hex');
}

/**
 * A request repeated with a key already used on the wallet: the same request gets the
 * entry it made the first time; another request gets 409 idempotency_conflict.
 */
export function replayOf(earlier: LedgerEntry, hash: string): LedgerEntry {
  if (earlier.requestHash !== hash) {
    throw new IdempotencyConflictError('This idempotency_key was already used with another request on this wallet', {
      field: 'idempotency_key',
      transaction_id: earlier.id,
    });
  }
  return earlier;
}
