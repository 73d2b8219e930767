import { rowsOf } from '@billstream/db';
import type { Logger } from '@billstream/logger';
import { Repeating } from '@billstream/runtime';
import type { Ledger } from '../ledger/ledger';
import type { Scope } from '@billstream/contracts';

export interface ExpiryResult {
  expired_transactions: number;
  wallets_affected: number;
}

/**
 * Writes off expired credits, one wallet per transaction, walking the wallets in id order.
 * Each wallet is taken with FOR UPDATE SKIP LOCKED, so replicas running the job at once share
 * the wallets and never expire one credit twice (a wallet busy with another change is left to
 * the next round; every change writes off its wallet's expired credits first anyway); an expired credit holds nothing
 * afterwards, so a second run finds nothing.
 */
export class ExpiryJob {
  private readonly schedule: Repeating<ExpiryResult>;

  constructor(
    private readonly ledger: Ledger,
    logger: Logger,
    intervalMs: number,
  ) {
    this.schedule = new Repeating({
      run: () => this.runOnce(),
      intervalMs,
      logger,
      failure: 'credit expiry round failed; will retry',
      done: (r) => {
        if (r.expired_transactions > 0) logger.info('expired credits written off', r);
      },
    });
  }

  async runOnce(scope?: Scope): Promise<ExpiryResult> {
    const result: ExpiryResult = { expired_transactions: 0, wallets_affected: 0 };
    let after = '';
    for (;;) {
      const out = await this.ledger.transaction(async (trx) => {
        const now = this.ledger.clock();
        const rows = rowsOf<{ id: string; tenant_id: string; environment_id: string }>(
          await trx.raw(
            `SELECT w.id, w.tenant_id, w.environment_id FROM wallets w
              WHERE w.id IN (SELECT t.wallet_id FROM transactions t
                              WHERE t.type = 'CREDIT' AND t.transaction_status = 'COMPLETED' AND t.credits_available > 0
                                AND t.expiry_date IS NOT NULL AND t.expiry_date <= ?)
                ${scope ? 'AND w.tenant_id = ? AND w.environment_id = ?' : ''}
                AND w.id > ?
              ORDER BY w.id LIMIT 1
              FOR UPDATE OF w SKIP LOCKED`,
            [now, ...(scope ? [scope.tenantId, scope.environmentId] : []), after],
          ),
        );
        const row = rows[0];
        if (!row) return { events: [], walletId: undefined, expired: 0 };
        const ctx = { tenantId: row.tenant_id, environmentId: row.environment_id, actor: 'system' };
        const changed = await this.ledger.changeIn(trx, ctx, row.id, async (change) => change.expiredCount);
        return { events: changed.events, walletId: row.id, expired: changed.result };
      });
      if (!out.walletId) return result;
      after = out.walletId;
      if (out.expired > 0) {
        result.expired_transactions += out.expired;
        result.wallets_affected += 1;
      }
    }
  }

  /** Runs the job every interval until stopped. */
  start(): void {
    this.schedule.start();
  }

  async stop(): Promise<void> {
    await this.schedule.stop();
  }
}
