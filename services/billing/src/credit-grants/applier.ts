import type { Scope } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import type { Logger } from '@billstream/logger';
import { toDecimalString } from '@billstream/money';
import { failpoint } from '@billstream/runtime';
import type { WalletCredits } from '../clients/wallets/domain';
import type { ApplicationStore } from './applications-store';
import { SKIP_REASONS, type Application } from './domain';

export type ApplyOutcome = 'applied' | 'skipped' | 'pending';

/**
 * Credits pending applications through the wallet service (ADR 0039): the wallet credits the
 * payer's PRE_PAID wallet once per idempotency key (`cgrant:{grant}:{subscription}:{period_start}`),
 * then billing marks the row applied. A crash between the two leaves the row pending; the
 * repeat gets the same wallet transaction back. A refusal for good (the expiry passed, the
 * customer is gone) marks it skipped; any other failure leaves it pending for the period job.
 */
export class GrantApplier {
  constructor(
    private readonly db: Db,
    private readonly applications: ApplicationStore,
    private readonly wallets: WalletCredits,
    private readonly logger: Logger,
    private readonly clock: () => Date,
  ) {}

  /** Applies each in turn; a failure is logged and leaves that one pending. */
  async applyAll(applications: Application[], requestId: string): Promise<ApplyOutcome[]> {
    const out: ApplyOutcome[] = [];
    for (const a of applications) {
      try {
        out.push(await this.apply(a, requestId));
      } catch (err) {
        this.logger.warn('credit grant: the wallet did not take the credit now; the period job retries it', { err, application_id: a.id });
        out.push('pending');
      }
    }
    return out;
  }

  async apply(a: Application, requestId: string): Promise<ApplyOutcome> {
    if (a.status !== 'pending') return a.status;
    const scope: Scope = { tenantId: a.tenantId, environmentId: a.environmentId };
    const outcome = await this.wallets.credit(
      scope,
      {
        customer_id: a.customerId,
        currency: a.currency,
        credits: toDecimalString(a.credits),
        transaction_reason: 'SUBSCRIPTION_CREDIT_GRANT',
        expiry_date: a.expiryDate?.toISOString() ?? null,
        priority: a.priority,
        description: a.description,
        idempotency_key: a.idempotencyKey,
        wallet: { conversion_rate: toDecimalString(a.conversionRate), allowed_price_types: ['USAGE'] },
      },
      requestId,
    );
    // Crash point of the exactly-once proof (ADR 0017): the wallet credited, billing has not recorded it.
    failpoint('grants.after-credit');
    if (outcome.kind === 'refused') {
      await this.applications.markSkipped(this.db, a.id, SKIP_REASONS[outcome.reason === 'expired' ? 'expired' : 'customerDeleted'], this.clock());
      return 'skipped';
    }
    await this.applications.markApplied(this.db, a.id, outcome.walletId, outcome.transactionId, this.clock());
    return 'applied';
  }
}
