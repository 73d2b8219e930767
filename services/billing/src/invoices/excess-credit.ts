import type { Scope } from '@billstream/contracts';
import { minorDigits } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import type { Logger } from '@billstream/logger';
import { exact, toDecimalString } from '@billstream/money';
import { failpoint } from '@billstream/runtime';
import type { WalletCredits } from '../clients/wallets/domain';
import type { Invoice } from './domain';

const BATCH = 200;

export interface ExcessCreditsDeps {
  db: Db;
  wallets: WalletCredits;
  logger: Logger;
  clock: () => Date;
}

/**
 * An invoice's `excess_credit` (docs/api/billing.md#invoice-arithmetic: what its negative lines left after
 * offsetting every line, a downgrade's surplus) goes to the customer's PRE_PAID wallet once it
 * is finalized: credited by key `invoice-excess:{id}` (the wallet credits a key once, creating
 * the wallet at rate "1" for ALL price types when missing, like Stripe's customer balance),
 * reason CREDIT_NOTE, then marked `excess_credited_at`. A wallet service down leaves it owed:
 * the period job credits it again (`retryOwed`), the key keeps it once (ADR 0043).
 */
export class ExcessCredits {
  private readonly db: Db;
  private readonly wallets: WalletCredits;
  private readonly logger: Logger;
  private readonly clock: () => Date;

  constructor(deps: ExcessCreditsDeps) {
    ({ db: this.db, wallets: this.wallets, logger: this.logger, clock: this.clock } = deps);
  }

  /** After a finalization's commit: credits what the invoice owes; a failure is logged and left to the period job. */
  async afterCommit(i: Invoice, requestId: string): Promise<void> {
    if (i.excessCredit <= 0 || (i.status !== 'finalized' && i.status !== 'paid')) return;
    try {
      await this.credit(i, requestId);
    } catch (err) {
      this.logger.warn('invoice finalized; crediting its excess credit to the wallet failed and will be retried by the period job', { err, invoice_id: i.id });
    }
  }

  /** The period job: every finalized invoice whose excess credit is still owed (of `scope` only when given); answers how many were credited. */
  async retryOwed(requestId: string, scope?: Scope): Promise<number> {
    const rows = await this.db('invoices')
      .where('excess_credit', '>', 0)
      .whereNull('excess_credited_at')
      .whereIn('status', ['finalized', 'paid'])
      .modify((q) => (scope ? q.where({ tenant_id: scope.tenantId, environment_id: scope.environmentId }) : q))
      .orderBy('finalized_at')
      .limit(BATCH)
      .select<Array<{ id: string; tenant_id: string; environment_id: string; customer_id: string; currency: string; excess_credit: string; invoice_number: string | null }>>(
        'id',
        'tenant_id',
        'environment_id',
        'customer_id',
        'currency',
        'excess_credit',
        'invoice_number',
      );
    let credited = 0;
    for (const r of rows) {
      try {
        await this.credit(
          { id: r.id, tenantId: r.tenant_id, environmentId: r.environment_id, customerId: r.customer_id, currency: r.currency, excessCredit: Number(r.excess_credit), invoiceNumber: r.invoice_number },
          requestId,
        );
        credited += 1;
      } catch (err) {
        this.logger.warn('crediting an invoice excess credit failed; retried on the next run', { err, invoice_id: r.id });
      }
    }
    return credited;
  }

  private async credit(i: Pick<Invoice, 'id' | 'tenantId' | 'environmentId' | 'customerId' | 'currency' | 'excessCredit' | 'invoiceNumber'>, requestId: string): Promise<void> {
    const amount = toDecimalString(exact(i.excessCredit).div(exact(10).pow(minorDigits(i.currency))));
    const outcome = await this.wallets.credit(
      i,
      {
        customer_id: i.customerId,
        currency: i.currency,
        amount,
        transaction_reason: 'CREDIT_NOTE',
        expiry_date: null,
        priority: null,
        description: `Excess credit of invoice ${i.invoiceNumber ?? i.id}`,
        idempotency_key: `invoice-excess:${i.id}`,
        wallet: { conversion_rate: '1', allowed_price_types: ['ALL'] },
      },
      requestId,
    );
    // Crash point of the exactly-once proof (ADR 0017): the wallet credited, billing has not recorded it.
    failpoint('invoices.after-excess-credit');
    if (outcome.kind === 'refused') this.logger.warn('the wallet refused an invoice excess credit for good', { invoice_id: i.id, reason: outcome.reason });
    await this.db('invoices').where({ id: i.id }).whereNull('excess_credited_at').update({ excess_credited_at: this.clock() });
  }
}
