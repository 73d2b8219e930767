import type { PGlite } from '@electric-sql/pglite';
import { KnexTimeoutError } from 'knex';

/** How long the session is lent without letting the event loop turn (see SharedSession). */
export const DEFAULT_SLICE_MS = 10;

/** `SET search_path` of a schema list, each name quoted. */
export function searchPathSql(schemas: string[]): string {
  return `SET search_path TO ${schemas.map((s) => `"${s.replace(/"/g, '""')}"`).join(', ')}`;
}

/**
 * The one session of an embedded PGlite database, lent to one holder at a time: a single
 * knex query, or a whole knex transaction from BEGIN to COMMIT or ROLLBACK. Holders of every
 * service queue here in arrival order, so the statements of two transactions never
 * interleave on the session. Before lending it, the session switches its search path to the
 * holder's schema when the previous holder's differed (one statement, outside any
 * transaction: the previous holder has ended its own).
 *
 * A holder must not wait for another holder: a transaction that awaits a query of another
 * knex (another service) waits for itself. Such a wait ends after `timeoutMs` with a
 * KnexTimeoutError instead of hanging (docs/adr/0012-one-embedded-database.md).
 *
 * PGlite runs on this thread and answers without I/O: a chain of queries (an import's batches,
 * an export, the period job) resolves promise after promise and never lets the event loop read
 * a socket. So an acquire yields to the event loop (setImmediate) once the session has been
 * lent for `sliceMs` without a turn of it: requests that arrived meanwhile are read and queue
 * for the session before the chain's next step (docs/adr/0036-embedded-long-work-yields.md).
 */
export class SharedSession {
  private held = false;
  private readonly queue: Array<() => void> = [];
  private searchPath: string | undefined;
  private turnedAt = performance.now();

  constructor(
    readonly pglite: PGlite,
    private readonly sliceMs = DEFAULT_SLICE_MS,
  ) {}

  /** Waits for the session and sets `searchPath` (a `SET search_path` statement) on it. */
  async acquire(searchPath: string, timeoutMs: number): Promise<PGlite> {
    if (performance.now() - this.turnedAt >= this.sliceMs) await this.yieldToEventLoop();
    await this.lock(timeoutMs);
    try {
      if (this.searchPath !== searchPath) {
        this.searchPath = undefined;
        await this.pglite.query(searchPath);
        this.searchPath = searchPath;
      }
      return this.pglite;
    } catch (err) {
      this.release();
      throw err;
    }
  }

  /** Lends the session to the next holder in line. */
  release(): void {
    const next = this.queue.shift();
    if (next) next();
    else this.held = false;
  }

  /** Lets the event loop run I/O callbacks (incoming requests) before the caller goes on. */
  private async yieldToEventLoop(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.turnedAt = performance.now();
  }

  /** Holders waiting for the session. */
  get waiting(): number {
    return this.queue.length;
  }

  private lock(timeoutMs: number): Promise<void> {
    if (!this.held) {
      this.held = true;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const grant = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        const at = this.queue.indexOf(grant);
        if (at < 0) return;
        this.queue.splice(at, 1);
        reject(
          new KnexTimeoutError(
            `Timeout acquiring the embedded database after ${timeoutMs} ms: is a transaction waiting for another database call of this process?`,
          ),
        );
      }, timeoutMs);
      this.queue.push(grant);
    });
  }
}
