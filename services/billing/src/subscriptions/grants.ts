import type { Scope } from '@billstream/contracts';
import type { Trx } from '@billstream/db';
import type { Subscription } from './domain';

/**
 * What the subscription service needs of credit grants (docs/api/credit-grants.md, ADR 0039).
 * credit-grants/ implements it (`CreditGrantBinder`): it sits above subscriptions/, which name
 * no grant. The two writes run inside the subscription's own transaction, under its row lock.
 */
export interface SubscriptionGrants {
  /** A new subscription takes its plan's active grants, and records the applications its start makes due. */
  created(trx: Trx, subscription: Subscription, now: Date): Promise<void>;
  /** A transition: records the applications due up to now, before it (a pause or cancel stops them) and after it (an activation or resume starts them). */
  changed(trx: Trx, before: Subscription, after: Subscription, now: Date): Promise<void>;
  /**
   * A plan change at `at` (docs/api/plan-changes.md and docs/api/credit-grants.md): the periods due under the old plan are
   * recorded, the plan's grants left stop, the new plan's bind from `at` (ONETIME ones apply at
   * once); with `prorate`, each RECURRING one grants its credits x the part of its current period
   * left, at once.
   */
  planChanged(trx: Trx, before: Subscription, after: Subscription, at: Date, prorate: boolean): Promise<void>;
  /** After the commit: credits the subscription's pending applications now; what fails stays pending for the period job. */
  settle(scope: Scope, subscriptionId: string, requestId: string): Promise<void>;
}
