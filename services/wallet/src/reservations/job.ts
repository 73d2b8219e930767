import type { Logger } from '@billstream/logger';
import { failpoint } from '@billstream/runtime';
import type { Ledger } from '../ledger/ledger';
import type { ReservationStore } from './store';

/** Holds marked expired per transaction. */
const BATCH = 500;
/** Default interval: a hold past `expires_at` is written expired within 1 s (docs/api/reservations.md). */
export const RESERVATION_EXPIRY_INTERVAL_MS = 250;

/**
 * Writes `expired` on holds past `expires_at` and announces `reservation.expired`. A read
 * never counts a hold past its time, so what is available does not wait for this job: it
 * makes the stored status and the event follow within the interval. Rows a commit or a
 * release holds are skipped (FOR UPDATE SKIP LOCKED): that call decides, and a hold it left
 * live is taken at the next round. Replicas share the rows the same way.
 */
export class ReservationExpiryJob {
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;
  private stopped = true;

  constructor(
    private readonly ledger: Ledger,
    private readonly store: ReservationStore,
    private readonly logger: Logger,
    private readonly intervalMs: number,
  ) {}

  /** Expires every due hold, BATCH a transaction; answers how many. */
  async runOnce(): Promise<number> {
    let total = 0;
    for (;;) {
      const { count } = await this.ledger.transaction(async (trx) => {
        const now = this.ledger.clock();
        const expired = await this.store.expireDue(trx, now, BATCH);
        const events = await this.store.announce(trx, null, expired, 'reservation.expired', now);
        if (expired.length > 0) failpoint('reservations.expiry.before-commit');
        return { count: expired.length, events };
      });
      if (count > 0) failpoint('reservations.expiry.after-commit');
      total += count;
      if (count < BATCH) return total;
    }
  }

  start(): void {
    if (this.intervalMs <= 0 || !this.stopped) return;
    this.stopped = false;
    const schedule = () => {
      this.timer = setTimeout(() => {
        this.running = this.runOnce()
          .then((n) => {
            if (n > 0) this.logger.debug('reservations expired', { expired: n });
          })
          .catch((err) => this.logger.warn('reservation expiry round failed; will retry', { err }))
          .finally(() => {
            if (!this.stopped) schedule();
          });
      }, this.intervalMs);
    };
    schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}
