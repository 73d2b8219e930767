export { outboxMigration } from './migration';
export { outboxInsert, outboxInsertMany, writeOutbox, newDomainEvent, RESOURCE_VERSION_HEADER, type EventContext, type OutboxItem } from './outbox';
export { OutboxRelay, type OutboxRelayOptions } from './relay';
export {
  idempotentBatchHandler,
  idempotentHandler,
  pruneProcessedMessages,
  type IdempotentBatchHandlerOptions,
  type IdempotentHandlerOptions,
} from './idempotent-consumer';
export { consumerDeadLettersMigration, consumerRetryPolicy, type ConsumerRetryPolicy } from './dead-letters';
