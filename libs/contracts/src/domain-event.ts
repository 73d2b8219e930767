import { z } from 'zod';

/**
 * The message a service publishes on customer-events, wallet-events or billing-events (through
 * its outbox). `type` is one of the public webhook event names, so a misspelt name does not
 * compile; `payload` is keyed by the resource name.
 */
export interface DomainEvent<P extends Record<string, unknown> = Record<string, unknown>> {
  id: string;
  type: WebhookEventName;
  tenant_id: string;
  environment_id: string;
  user_id: string;
  occurred_at: string;
  payload: P;
}

export const domainEventSchema = z.object({
  id: z.string(),
  type: z.string(),
  tenant_id: z.string(),
  environment_id: z.string(),
  user_id: z.string(),
  occurred_at: z.string(),
  payload: z.record(z.string(), z.unknown()),
});

/**
 * A domain event as a consumer reads it off the bus: `type` is any string until the consumer
 * checks it (a newer producer may publish a name this build does not know).
 */
export type ReceivedDomainEvent = z.infer<typeof domainEventSchema>;

/**
 * Every public webhook event name of the spec, the one list of them: producers publish
 * `DomainEvent`s typed with it, endpoints subscribe to its names, and docs/api/webhooks.md
 * lists for each the operations that emit it (a unit test holds the two together).
 */
export const WEBHOOK_EVENT_NAMES = [
  'invoice.create.drafted',
  'invoice.update.finalized',
  'invoice.update.payment',
  'invoice.update.voided',
  'invoice.update',
  'invoice.payment.overdue',
  'invoice.communication.triggered',
  'subscription.created',
  'subscription.draft.created',
  'subscription.activated',
  'subscription.updated',
  'subscription.paused',
  'subscription.cancelled',
  'subscription.resumed',
  'subscription.renewal.due',
  'payment.created',
  'payment.updated',
  'payment.success',
  'payment.failed',
  'payment.pending',
  'customer.created',
  'customer.updated',
  'customer.deleted',
  'wallet.created',
  'wallet.updated',
  'wallet.terminated',
  'wallet.transaction.created',
  'wallet.credit_balance.dropped',
  'wallet.credit_balance.recovered',
  'wallet.ongoing_balance.dropped',
  'wallet.ongoing_balance.recovered',
  'feature.created',
  'feature.updated',
  'feature.deleted',
  'feature.wallet_balance.alert',
  'entitlement.created',
  'entitlement.updated',
  'entitlement.deleted',
  'credit_note.created',
  'credit_note.updated',
  'reservation.created',
  'reservation.committed',
  'reservation.released',
  'reservation.expired',
] as const;
export type WebhookEventName = (typeof WEBHOOK_EVENT_NAMES)[number];
