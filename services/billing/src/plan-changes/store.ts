import type { Scope, SubscriptionResponse } from '@billstream/contracts';
import type { Conn, Trx } from '@billstream/db';
import type { ChangeRecord } from './domain';

interface ChangeRow {
  id: string;
  tenant_id: string;
  environment_id: string;
  subscription_id: string;
  idempotency_key: string | null;
  request_hash: string;
  effective: ChangeRecord['effective'];
  effective_at: Date;
  from_plan_id: string;
  to_plan_id: string;
  invoice_id: string | null;
  subscription: SubscriptionResponse;
  created_at: Date;
}

function fromRow(r: ChangeRow): ChangeRecord {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    environmentId: r.environment_id,
    subscriptionId: r.subscription_id,
    idempotencyKey: r.idempotency_key,
    requestHash: r.request_hash,
    effective: r.effective,
    effectiveAt: r.effective_at,
    fromPlanId: r.from_plan_id,
    toPlanId: r.to_plan_id,
    invoiceId: r.invoice_id,
    subscription: r.subscription,
    createdAt: r.created_at,
  };
}

/** `subscription_changes`: one row per plan change, its idempotency key unique per tenant and environment. */
export class ChangeStore {
  /** Inserts the change; false (nothing written) when its idempotency key is taken. */
  async insert(trx: Trx, c: ChangeRecord): Promise<boolean> {
    const rows = await trx('subscription_changes')
      .insert({
        id: c.id,
        tenant_id: c.tenantId,
        environment_id: c.environmentId,
        subscription_id: c.subscriptionId,
        idempotency_key: c.idempotencyKey,
        request_hash: c.requestHash,
        effective: c.effective,
        effective_at: c.effectiveAt,
        from_plan_id: c.fromPlanId,
        to_plan_id: c.toPlanId,
        invoice_id: c.invoiceId,
        subscription: JSON.stringify(c.subscription),
        created_at: c.createdAt,
      })
      .onConflict(trx.raw('(tenant_id, environment_id, idempotency_key) WHERE idempotency_key IS NOT NULL'))
      .ignore()
      .returning('id');
    return rows.length > 0;
  }

  async getByKey(conn: Conn, scope: Scope, key: string): Promise<ChangeRecord | undefined> {
    const row = await conn<ChangeRow>('subscription_changes').where({ tenant_id: scope.tenantId, environment_id: scope.environmentId, idempotency_key: key }).first();
    return row && fromRow(row as ChangeRow);
  }
}
