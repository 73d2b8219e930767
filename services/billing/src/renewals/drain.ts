import type { Logger } from '@billstream/logger';

/**
 * Claims batches until none is left and works on each item, `concurrency` at once. A failing
 * item is logged and left to its lease's expiry (a later run retries it).
 */
export async function drain(claim: () => Promise<string[]>, work: (id: string) => Promise<void>, what: string, concurrency: number, logger: Logger): Promise<void> {
  for (let ids = await claim(); ids.length > 0; ids = await claim()) {
    let next = 0;
    const worker = async () => {
      while (next < ids.length) {
        const id = ids[next++]!;
        try {
          await work(id);
        } catch (err) {
          logger.warn(`period job: ${what} failed; it is retried when its claim expires`, { err, id });
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, ids.length) }, worker));
  }
}

/**
 * Claims batches until none is left, `parallel` batches at once, each worked on as a whole
 * (its items' failures are the work's to log). While `more()` says more may come, an empty
 * claim waits a moment and claims again.
 */
export async function drainBatches(claim: () => Promise<string[]>, work: (ids: string[]) => Promise<void>, parallel: number, more: () => boolean = () => false): Promise<void> {
  const loop = async () => {
    for (;;) {
      const ids = await claim();
      if (ids.length > 0) await work(ids);
      else if (more()) await new Promise((resolve) => setTimeout(resolve, 100));
      else return;
    }
  };
  await Promise.all(Array.from({ length: parallel }, loop));
}
