import { AsyncLocalStorage } from 'node:async_hooks';

/** A database transaction the current async context runs inside, while it is open. */
export interface HeldTransaction {
  /** On the embedded database, whose one session it holds. */
  readonly embedded: boolean;
  open: boolean;
}

const held = new AsyncLocalStorage<HeldTransaction>();

/** Runs `fn` (a transaction's callback) as holding a transaction until it settles (libs/db marks every knex). */
export async function runHoldingTransaction<T>(embedded: boolean, fn: () => Promise<T>): Promise<T> {
  const mark: HeldTransaction = { embedded, open: true };
  return held.run(mark, async () => {
    try {
      return await fn();
    } finally {
      // Timers and promises made inside keep this context: they no longer hold it.
      mark.open = false;
    }
  });
}

/** The transaction this async context holds, if one is open. */
export function heldTransaction(): HeldTransaction | undefined {
  const mark = held.getStore();
  return mark?.open ? mark : undefined;
}
