export { createClient, DEFAULT_BASE_URL, type BillstreamClient, type ClientOptions, type RetryInfo } from './client';
export { type Reservation, type ReservationCalls, type ReserveParams, type WorkResult } from './reservations';
export { BillstreamError, isBillstreamError, type InternalError } from './errors';
export {
  BATCHER_DEFAULTS,
  BatcherClosedError,
  EventBatcher,
  FlushTimeoutError,
  type BatcherOptions,
  type BatcherStats,
  type BatchSender,
  type QueuedEvent,
  type UsageEvent,
} from './batcher';
export { RETRY_DEFAULTS, type RetryOptions } from './retry';
export {
  isTestPayload,
  verifyWebhook,
  WebhookVerificationError,
  type BalanceAlert,
  type Customer,
  type Invoice,
  type Payment,
  type Subscription,
  type Wallet,
  type WalletTransaction,
  type VerifyOptions,
  type WebhookEnvelope,
  type WebhookEventName,
  type WebhookHeaders,
  type WebhookPayload,
  type WebhookPayloads,
  type WebhookTestPayload,
} from './webhooks';
export type { CallOptions, components, Method, paths, RequestBody, ResponseBody } from './types';
