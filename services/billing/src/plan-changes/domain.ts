import type { SubscriptionResponse } from '@billstream/contracts';
import type { ChangeEffective, ChangeRequest } from '../subscriptions/domain';

/** One plan change (`schg_`, docs/api/plan-changes.md): bound to its idempotency key, with the invoice it made. */
export interface ChangeRecord {
  id: string;
  tenantId: string;
  environmentId: string;
  subscriptionId: string;
  idempotencyKey: string | null;
  requestHash: string;
  effective: ChangeEffective;
  effectiveAt: Date;
  fromPlanId: string;
  toPlanId: string;
  invoiceId: string | null;
  /** The subscription as the change answered it (a retry with the key answers it again). */
  subscription: SubscriptionResponse;
  createdAt: Date;
}

/**
 * A plan change as the service takes it (the route maps the wire body to it, ADR 0063): the change
 * as asked, its idempotency key, and the fingerprint of the request as sent, which a retry with
 * the key must repeat (`requestHash`).
 */
export interface PlanChange extends ChangeRequest {
  idempotencyKey?: string;
  requestHash: string;
}
