import type { Knex } from 'knex';
import { runHoldingTransaction } from '@billstream/observability';

const marked = new WeakSet<Knex>();

/**
 * Marks the callback of every `db.transaction(handler)` as holding a transaction, so that a
 * call to another service made inside it is caught (`heldTransaction`, libs/http's
 * InternalClient): no code calls another service while it holds a transaction (ADR 0055).
 */
export function markTransactions(db: Knex, embedded: boolean): Knex {
  if (marked.has(db)) return db;
  marked.add(db);
  const original = db.transaction.bind(db) as (handler?: unknown, config?: unknown) => unknown;
  const transaction = (handler?: unknown, config?: unknown) => {
    if (typeof handler !== 'function') return original(handler, config);
    const run = handler as (trx: Knex.Transaction) => Promise<unknown>;
    return original((trx: Knex.Transaction) => runHoldingTransaction(embedded, () => Promise.resolve(run(trx))), config);
  };
  Object.defineProperty(db, 'transaction', { value: transaction, configurable: true, writable: true });
  return db;
}
