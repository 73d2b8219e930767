import type { Scope } from '@billstream/contracts';
import type { Conn, Db, Trx } from '@billstream/db';
import { exact, toDecimalString } from '@billstream/money';
import type { Application, ApplicationListQuery } from './domain';

interface ApplicationRow {
  id: string;
  tenant_id: string;
  environment_id: string;
  grant_id: string;
  subscription_id: string;
  customer_id: string;
  currency: string;
  period_start: Date;
  period_end: Date;
  credits: string;
  expiry_date: Date | null;
  priority: number | null;
  conversion_rate: string;
  description: string;
  idempotency_key: string;
  status: Application['status'];
  skip_reason: string | null;
  wallet_id: string | null;
  wallet_transaction_id: string | null;
  attempts: number;
  next_attempt_at: Date | null;
  applied_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

function fromRow(r: ApplicationRow): Application {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    environmentId: r.environment_id,
    grantId: r.grant_id,
    subscriptionId: r.subscription_id,
    customerId: r.customer_id,
    currency: r.currency,
    periodStart: r.period_start,
    periodEnd: r.period_end,
    credits: exact(r.credits),
    expiryDate: r.expiry_date,
    priority: r.priority,
    conversionRate: exact(r.conversion_rate),
    description: r.description,
    idempotencyKey: r.idempotency_key,
    status: r.status,
    skipReason: r.skip_reason,
    walletId: r.wallet_id,
    walletTransactionId: r.wallet_transaction_id,
    attempts: r.attempts,
    nextAttemptAt: r.next_attempt_at,
    appliedAt: r.applied_at,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function toRow(a: Application): ApplicationRow {
  return {
    id: a.id,
    tenant_id: a.tenantId,
    environment_id: a.environmentId,
    grant_id: a.grantId,
    subscription_id: a.subscriptionId,
    customer_id: a.customerId,
    currency: a.currency,
    period_start: a.periodStart,
    period_end: a.periodEnd,
    credits: toDecimalString(a.credits),
    expiry_date: a.expiryDate,
    priority: a.priority,
    conversion_rate: toDecimalString(a.conversionRate),
    description: a.description,
    idempotency_key: a.idempotencyKey,
    status: a.status,
    skip_reason: a.skipReason,
    wallet_id: a.walletId,
    wallet_transaction_id: a.walletTransactionId,
    attempts: a.attempts,
    next_attempt_at: a.nextAttemptAt,
    applied_at: a.appliedAt,
    created_at: a.createdAt,
    updated_at: a.updatedAt,
  };
}

/** What the wallet did with a pending application. */
export type ApplicationMark = { id: string; status: 'applied'; walletId: string; transactionId: string } | { id: string; status: 'skipped'; reason: string };

/** One row per grant, subscription and period start (unique): the billing half of a grant's exactly once. */
export class ApplicationStore {
  /** Inserts the applications not recorded yet (a period already recorded keeps its row). */
  async insertMany(trx: Trx, applications: Application[]): Promise<void> {
    if (applications.length === 0) return;
    await trx('credit_grant_applications').insert(applications.map(toRow)).onConflict(['grant_id', 'subscription_id', 'period_start']).ignore();
  }

  async getByIds(conn: Conn, ids: string[]): Promise<Application[]> {
    if (ids.length === 0) return [];
    const rows = await conn<ApplicationRow>('credit_grant_applications').whereIn('id', ids).orderBy(['period_start', 'id']);
    return rows.map((r) => fromRow(r as ApplicationRow));
  }

  async pendingOfSubscription(conn: Conn, scope: Scope, subscriptionId: string): Promise<Application[]> {
    const rows = await conn<ApplicationRow>('credit_grant_applications')
      .where({ tenant_id: scope.tenantId, environment_id: scope.environmentId, subscription_id: subscriptionId, status: 'pending' }).orderBy(['period_start', 'id']);
    return rows.map((r) => fromRow(r as ApplicationRow));
  }

  async listOfGrant(conn: Conn, scope: Scope, grantId: string, q: ApplicationListQuery): Promise<{ items: Application[]; total: number }> {
    const filtered = () => {
      const b = conn<ApplicationRow>('credit_grant_applications').where({ tenant_id: scope.tenantId, environment_id: scope.environmentId, grant_id: grantId });
      if (q.subscriptionId) b.where({ subscription_id: q.subscriptionId });
      if (q.status) b.where({ status: q.status });
      return b;
    };
    const [rows, count] = await Promise.all([
      filtered().orderBy([{ column: 'period_start' }, { column: 'id' }]).limit(q.limit).offset(q.offset),
      filtered().count<Array<{ n: string }>>({ n: '*' }),
    ]);
    return { items: (rows as ApplicationRow[]).map(fromRow), total: Number(count[0]!.n) };
  }

  /**
   * Records what the wallet did with pending applications, in one statement: `applied` with the
   * wallet's credit, `skipped` with the reason of a final refusal. A row no longer pending (a
   * repeat, or settled meanwhile) is left as it is.
   */
  async markMany(conn: Conn, marks: ApplicationMark[], at: Date): Promise<void> {
    if (marks.length === 0) return;
    const values = marks.map(() => '(?, ?, ?, ?, ?)').join(', ');
    await conn.raw(
      `UPDATE credit_grant_applications a
          SET status = v.status, skip_reason = v.skip_reason, wallet_id = v.wallet_id, wallet_transaction_id = v.transaction_id,
              applied_at = CASE WHEN v.status = 'applied' THEN ?::timestamptz END, next_attempt_at = NULL, updated_at = ?
         FROM (VALUES ${values}) AS v (id, status, skip_reason, wallet_id, transaction_id)
        WHERE a.id = v.id AND a.status = 'pending'`,
      [
        at,
        at,
        ...marks.flatMap((m) => (m.status === 'applied' ? [m.id, 'applied', null, m.walletId, m.transactionId] : [m.id, 'skipped', m.reason, null, null])),
      ],
    );
  }

  /**
   * Claims the pending applications of `subscriptionIds` whose attempt is due, as `claimPending`
   * does (the period job, right after it recorded their periods), and answers them.
   */
  async claimPendingOf(db: Db, subscriptionIds: string[], now: Date, leaseMs: number): Promise<Application[]> {
    if (subscriptionIds.length === 0) return [];
    const result = await db.raw<{ rows: ApplicationRow[] }>(
      `UPDATE credit_grant_applications SET next_attempt_at = ?, attempts = attempts + 1 WHERE id IN (
         SELECT id FROM credit_grant_applications
          WHERE subscription_id = ANY(?::text[]) AND status = 'pending' AND next_attempt_at <= ?
          FOR UPDATE SKIP LOCKED)
       RETURNING *`,
      [new Date(now.getTime() + leaseMs), subscriptionIds, now],
    );
    return result.rows.map(fromRow).sort((a, b) => a.periodStart.getTime() - b.periodStart.getTime() || a.id.localeCompare(b.id));
  }

  /**
   * Claims up to `limit` pending applications whose attempt is due for `leaseMs` (SKIP LOCKED
   * and the lease keep replicas apart; a failed attempt is retried once the lease passes).
   */
  async claimPending(db: Db, now: Date, leaseMs: number, limit: number, scope?: Scope): Promise<string[]> {
    const result = await db.raw<{ rows: Array<{ id: string }> }>(
      `UPDATE credit_grant_applications SET next_attempt_at = ?, attempts = attempts + 1 WHERE id IN (
         SELECT id FROM credit_grant_applications
          WHERE status = 'pending' AND next_attempt_at <= ? ${scope ? 'AND tenant_id = ? AND environment_id = ?' : ''}
          ORDER BY next_attempt_at, id LIMIT ? FOR UPDATE SKIP LOCKED)
       RETURNING id`,
      [new Date(now.getTime() + leaseMs), now, ...(scope ? [scope.tenantId, scope.environmentId] : []), limit],
    );
    return result.rows.map((r) => r.id);
  }
}
