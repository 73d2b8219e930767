import { randomBytes } from 'node:crypto';

/** Brokers started by the global setup (or given in KAFKA_BROKERS). */
export function kafkaBrokers(): string[] {
  const brokers = process.env.KAFKA_BROKERS;
  if (!brokers) throw new Error('KAFKA_BROKERS is not set: run tests through jest (global setup starts Kafka)');
  return brokers.split(',').map((b) => b.trim());
}

/** A topic/group prefix unique to one test, so that tests sharing a broker never meet. */
export function uniqueTopicPrefix(label = 't'): string {
  return `${label}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}.`;
}
