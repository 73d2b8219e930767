import { MAX_CREDITS_PER_BATCH, type Scope } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import type { Logger } from '@billstream/logger';
import { toDecimalString } from '@billstream/money';
import { failpoint } from '@billstream/runtime';
import type { CustomerCreditRequest, WalletCredits } from '../clients/wallets/domain';
import type { ApplicationMark, ApplicationStore } from './applications-store';
import { SKIP_REASONS, type Application } from './domain';

export type ApplyOutcome = 'applied' | 'skipped' | 'pending';

export interface GrantApplierDeps {
  db: Db;
  applications: ApplicationStore;
  wallets: WalletCredits;
  logger: Logger;
  clock: () => Date;
}

/**
 * Credits pending applications through the wallet service (ADR 0039, 0048): the wallet credits
 * the payer's PRE_PAID wallet once per idempotency key (`cgrant:{grant}:{subscription}:{period_start}`),
 * then billing marks the rows applied. Applications go in chunks of up to
 * MAX_CREDITS_PER_BATCH of one tenant and environment: one wallet call and one statement that
 * marks the chunk. A crash between the two leaves the chunk pending; the repeat gets the same
 * wallet transactions back. A refusal for good (the expiry passed, the customer is gone) marks
 * the row skipped; a failed call leaves its whole chunk pending for the period job, a frozen
 * wallet leaves its row pending.
 */
export class GrantApplier {
  constructor(private readonly deps: GrantApplierDeps) {}

  /** Applies the pending ones, a chunk at a time; answers each one's outcome in order. A failed chunk is logged and stays pending. */
  async applyAll(applications: Application[], requestId: string): Promise<ApplyOutcome[]> {
    const out: ApplyOutcome[] = applications.map((a) => (a.status === 'pending' ? 'pending' : a.status));
    const byScope = new Map<string, number[]>();
    for (const [i, a] of applications.entries()) {
      if (a.status !== 'pending') continue;
      const key = JSON.stringify([a.tenantId, a.environmentId]);
      byScope.set(key, [...(byScope.get(key) ?? []), i]);
    }
    for (const indexes of byScope.values()) {
      for (let at = 0; at < indexes.length; at += MAX_CREDITS_PER_BATCH) {
        const chunk = indexes.slice(at, at + MAX_CREDITS_PER_BATCH);
        try {
          const outcomes = await this.applyChunk(chunk.map((i) => applications[i]), requestId);
          for (const [n, i] of chunk.entries()) out[i] = outcomes[n];
        } catch (err) {
          this.deps.logger.warn('credit grant: the wallet did not take the credits now; the period job retries them', { err, application_ids: chunk.map((i) => applications[i].id) });
        }
      }
    }
    return out;
  }

  /** One wallet call for pending applications of one tenant and environment, then one statement marks them. */
  private async applyChunk(chunk: Application[], requestId: string): Promise<ApplyOutcome[]> {
    const scope: Scope = { tenantId: chunk[0].tenantId, environmentId: chunk[0].environmentId };
    const outcomes = await this.deps.wallets.creditMany(scope, chunk.map(creditRequest), requestId);
    // Crash point of the exactly-once proof (ADR 0017): the wallet credited, billing has not recorded it.
    failpoint('grants.after-credit');
    const marks: ApplicationMark[] = [];
    const answers = outcomes.map((outcome, n): ApplyOutcome => {
      const { id } = chunk[n];
      if (outcome.kind === 'credited') {
        marks.push({ id, status: 'applied', walletId: outcome.walletId, transactionId: outcome.transactionId });
        return 'applied';
      }
      if (outcome.kind === 'refused') {
        marks.push({ id, status: 'skipped', reason: SKIP_REASONS[outcome.reason === 'expired' ? 'expired' : 'customerDeleted'] });
        return 'skipped';
      }
      this.deps.logger.warn('credit grant: the wallet refused the credit for now; the period job retries it', { application_id: id, reason: outcome.message });
      return 'pending';
    });
    await this.deps.applications.markMany(this.deps.db, marks, this.deps.clock());
    return answers;
  }
}

/** The wallet credit of an application, by its key. */
function creditRequest(a: Application): CustomerCreditRequest {
  return {
    customer_id: a.customerId,
    currency: a.currency,
    credits: toDecimalString(a.credits),
    transaction_reason: 'SUBSCRIPTION_CREDIT_GRANT',
    expiry_date: a.expiryDate?.toISOString() ?? null,
    priority: a.priority,
    description: a.description,
    idempotency_key: a.idempotencyKey,
    wallet: { conversion_rate: toDecimalString(a.conversionRate), allowed_price_types: ['USAGE'] },
  };
}
