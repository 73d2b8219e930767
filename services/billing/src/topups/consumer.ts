import { TOPICS, type Bus, type ConsumedMessage, type Subscription } from '@billstream/bus';
import { domainEventSchema } from '@billstream/contracts';
import { DomainError } from '@billstream/errors';
import type { Logger } from '@billstream/logger';
import { z } from 'zod';
import type { PendingTopup, TopupInvoicer } from './invoicer';

export const WALLET_CONSUMER_GROUP = 'billing.wallets';

const transactionCreated = domainEventSchema.extend({
  type: z.literal('wallet.transaction.created'),
  payload: z.object({
    transaction: z.object({
      id: z.string(),
      wallet_id: z.string(),
      transaction_status: z.string(),
      transaction_reason: z.string(),
      credit_amount: z.string(),
      tenant_id: z.string().optional(),
      environment_id: z.string().optional(),
    }),
  }),
});

/**
 * The invoiced top-up a wallet-events message announces, or undefined for any other message (the
 * topic carries every wallet event): a PENDING credit with reason PURCHASED_CREDIT_INVOICED, from
 * a client's top-up or an auto top-up with `invoicing: true`.
 */
export function pendingTopupOf(message: ConsumedMessage): PendingTopup | undefined {
  if (message.headers['event-type'] && message.headers['event-type'] !== 'wallet.transaction.created') return undefined;
  const parsed = transactionCreated.safeParse(JSON.parse(message.value));
  if (!parsed.success) return undefined;
  const event = parsed.data;
  const t = event.payload.transaction;
  if (t.transaction_reason !== 'PURCHASED_CREDIT_INVOICED' || t.transaction_status !== 'PENDING') return undefined;
  return {
    scope: { tenantId: t.tenant_id ?? event.tenant_id, environmentId: t.environment_id ?? event.environment_id },
    walletId: t.wallet_id,
    transactionId: t.id,
    credits: t.credit_amount,
  };
}

/**
 * Invoices every invoiced top-up published on wallet-events. Exactly once without a
 * processed-messages table: the invoice's unique `source_key` (one per wallet transaction) makes
 * a redelivery find its invoice, and finish it if a crash left it a draft. A wallet outage fails
 * the batch, which Kafka redelivers; a top-up that can never be invoiced (an unknown currency,
 * an amount too large) is logged and skipped so it does not block the partition.
 */
export function subscribeWalletEvents(deps: { bus: Bus; logger: Logger; topups: TopupInvoicer }): Promise<Subscription> {
  const { bus, logger, topups } = deps;
  return bus.subscribe({
    groupId: WALLET_CONSUMER_GROUP,
    topics: [TOPICS.walletEvents],
    handler: async (messages, ctx) => {
      for (const message of messages) {
        let topup: PendingTopup | undefined;
        try {
          topup = pendingTopupOf(message);
        } catch (err) {
          logger.error('skipping a wallet-events message that does not parse', { err, topic: message.topic, offset: message.offset });
        }
        if (!topup) continue;
        try {
          await topups.invoice(topup, `wallet-event-${message.headers['message-id'] ?? message.offset}`);
        } catch (err) {
          if (!(err instanceof DomainError) || err.kind === 'unavailable' || err.kind === 'database') throw err;
          logger.error('an invoiced top-up cannot be invoiced; skipped', { err, wallet_id: topup.walletId, transaction_id: topup.transactionId });
        }
        await ctx.heartbeat();
      }
    },
  });
}
