// The publisher moved to @billstream/bus: the billing service's event imports publish through it too (ADR 0019).
export { MAX_SEND_BYTES, UsageEventPublisher, messageKey, toMessage, type PublisherOptions } from '@billstream/bus';
