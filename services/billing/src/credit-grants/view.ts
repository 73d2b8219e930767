import type { creditGrantApplicationSchema, creditGrantSchema } from '@billstream/contracts';
import { toDecimalString } from '@billstream/money';
import type { z } from 'zod';
import type { Application, CreditGrant } from './domain';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function toCreditGrantView(g: CreditGrant): z.output<typeof creditGrantSchema> {
  return {
    id: g.id,
    plan_id: g.planId,
    subscription_id: g.subscriptionId,
    name: g.name,
    credits: toDecimalString(g.credits),
    cadence: g.cadence,
    period: g.period,
    expire_in_days: g.expireInDays,
    priority: g.priority,
    conversion_rate: g.conversionRate && toDecimalString(g.conversionRate),
    metadata: g.metadata,
    status: g.status,
    archived_at: iso(g.archivedAt),
    created_at: g.createdAt.toISOString(),
    updated_at: g.updatedAt.toISOString(),
    tenant_id: g.tenantId,
    environment_id: g.environmentId,
  };
}

export function toApplicationView(a: Application): z.output<typeof creditGrantApplicationSchema> {
  return {
    id: a.id,
    credit_grant_id: a.grantId,
    subscription_id: a.subscriptionId,
    customer_id: a.customerId,
    period_start: a.periodStart.toISOString(),
    period_end: a.periodEnd.toISOString(),
    credits: toDecimalString(a.credits),
    currency: a.currency,
    status: a.status,
    skip_reason: a.skipReason,
    expiry_date: iso(a.expiryDate),
    priority: a.priority,
    idempotency_key: a.idempotencyKey,
    wallet_id: a.walletId,
    wallet_transaction_id: a.walletTransactionId,
    applied_at: iso(a.appliedAt),
    created_at: a.createdAt.toISOString(),
    updated_at: a.updatedAt.toISOString(),
  };
}
