import type { WebhookEventName } from '@billstream/contracts';

/** Public names of the events the wallet service publishes on wallet-events. */
export const WALLET_EVENTS = {
  created: 'wallet.created',
  updated: 'wallet.updated',
  terminated: 'wallet.terminated',
  entryCreated: 'wallet.transaction.created',
  creditBalanceDropped: 'wallet.credit_balance.dropped',
  creditBalanceRecovered: 'wallet.credit_balance.recovered',
  ongoingBalanceDropped: 'wallet.ongoing_balance.dropped',
  ongoingBalanceRecovered: 'wallet.ongoing_balance.recovered',
} as const satisfies Record<string, WebhookEventName>;
