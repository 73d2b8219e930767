export { outboxMigration } from './migration';
export { writeOutbox, newDomainEvent, type EventContext } from './outbox';
export { OutboxRelay, type OutboxRelayOptions } from './relay';
export { idempotentHandler, pruneProcessedMessages, type IdempotentHandlerOptions } from './idempotent-consumer';
