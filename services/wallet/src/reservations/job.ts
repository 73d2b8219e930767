import type { Logger } from '@billstream/logger';
import { Repeating, failpoint } from '@billstream/runtime';
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
  private readonly schedule: Repeating<number>;

  constructor(
    private readonly ledger: Ledger,
    private readonly store: ReservationStore,
    logger: Logger,
    intervalMs: number,
  ) {
    this.schedule = new Repeating({
      run: () => this.runOnce(),
      intervalMs,
      logger,
      failure: 'reservation expiry round failed; will retry',
      done: (n) => {
        if (n > 0) logger.debug('reservations expired', { expired: n });
      },
    });
  }

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
    this.schedule.start();
  }

  async stop(): Promise<void> {
    await this.schedule.stop();
  }
}
