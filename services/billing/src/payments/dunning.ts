import type { Scope } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import { IdempotencyConflictError, ValidationError } from '@billstream/errors';
import type { Logger } from '@billstream/logger';
import type { SettingsStore } from '../settings/store';
import type { PaymentService } from './service';
import type { PaymentStore } from './store';

const DAY_MS = 86_400_000;
const BATCH = 500;

export interface DunningDeps {
  db: Db;
  settings: SettingsStore;
  payments: PaymentStore;
  service: PaymentService;
  logger: Logger;
  clock: () => Date;
}

/**
 * Dunning (docs/api/billing.md#billing-settings-and-dunning, ADR 0044): for tenants that enabled it, each finalized
 * invoice marked overdue with money left gets attempt n (1, 2, ...) at `due_date +
 * retry_schedule_days[n−1]`, while fewer than `max_attempts` were made and none is pending: a
 * PENDING PROVIDER payment of what remains, with the invoice's last processor (else the
 * setting's), keyed `dunning:{invoice_id}:{n}`. Its `payment.pending` cues the client's
 * processor integration, which settles it with succeed or fail; a failed attempt never blocks
 * the next. The key makes each attempt once across replicas, retries and restarts (a replica
 * that loses the race answers the winner's payment). A schedule shorter than `max_attempts`
 * stops at its last day.
 */
export class Dunning {
  private readonly db: Db;
  private readonly settings: SettingsStore;
  private readonly payments: PaymentStore;
  private readonly service: PaymentService;
  private readonly logger: Logger;
  private readonly clock: () => Date;

  constructor(deps: DunningDeps) {
    ({ db: this.db, settings: this.settings, payments: this.payments, service: this.service, logger: this.logger, clock: this.clock } = deps);
  }

  /** One run of the period job; answers how many attempts it made. */
  async runOnce(requestId: string, scope?: Scope): Promise<number> {
    let made = 0;
    for (const tenant of await this.settings.dunningEnabled(this.db, scope)) {
      const { dunning } = tenant;
      const overdue = await this.db('invoices')
        .where({ tenant_id: tenant.tenantId, environment_id: tenant.environmentId, status: 'finalized', overdue: true })
        .where('amount_remaining', '>', 0)
        .whereNotNull('due_date')
        .orderBy('due_date')
        .limit(BATCH)
        .select<Array<{ id: string; due_date: Date; amount_remaining: string }>>('id', 'due_date', 'amount_remaining');
      for (const invoice of overdue) {
        const state = await this.payments.dunningState(this.db, invoice.id);
        if (state.pending || state.attempts >= dunning.max_attempts) continue;
        const n = state.attempts + 1;
        const days = dunning.retry_schedule_days[n - 1];
        if (days === undefined || invoice.due_date.getTime() + days * DAY_MS > this.clock().getTime()) continue;
        const provider = state.lastProvider ?? dunning.provider;
        if (!provider) {
          this.logger.warn('dunning: no processor to retry an overdue invoice with (set dunning.provider)', { invoice_id: invoice.id });
          continue;
        }
        try {
          await this.service.create(
            { tenantId: tenant.tenantId, environmentId: tenant.environmentId, actor: 'dunning' },
            { invoiceId: invoice.id, amount: Number(invoice.amount_remaining), paymentMethodType: 'PROVIDER', provider, idempotencyKey: `dunning:${invoice.id}:${n}` },
            requestId,
            { attempt: n },
          );
          made += 1;
        } catch (err) {
          // Paid, voided or another attempt made meanwhile: nothing to do this run.
          if (!(err instanceof ValidationError || err instanceof IdempotencyConflictError)) throw err;
        }
      }
    }
    return made;
  }
}
