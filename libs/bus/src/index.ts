export * from './types';
export { InProcessBus } from './in-process-bus';
export { KAFKA_TIMING_DEFAULTS, KafkaBus, type KafkaBusOptions, type KafkaTiming } from './kafka-bus';
export { MAX_SEND_BYTES, UsageEventPublisher, messageKey, toMessage, type PublisherOptions } from './usage-publisher';
