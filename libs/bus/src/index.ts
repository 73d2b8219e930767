export * from './types';
export { InProcessBus } from './in-process-bus';
export { KafkaBus, type KafkaBusOptions } from './kafka-bus';
