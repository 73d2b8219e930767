import { Admin, Consumer, Kafka, logLevel as KafkaLogLevel, LogEntry, Partitioners, Producer } from 'kafkajs';
import type { Logger } from '@billstream/logger';
import type { Bus, ConsumedMessage, OutgoingMessage, SubscribeOptions, Subscription } from './types';

export interface KafkaBusOptions {
  brokers: string[];
  clientId: string;
  logger: Logger;
  /** Prepended to every topic name (test isolation, shared clusters). */
  topicPrefix?: string;
  partitions?: number;
  /** A publish not acknowledged within this time fails (the caller answers 503). */
  publishTimeoutMs?: number;
  /**
   * Idempotent producers to spread concurrent publishes over (default 4). kafkajs sends one
   * request at a time per idempotent producer and broker; callers that need order between two
   * publishes await the first before the second, so spreading keeps every order they can see.
   */
  producers?: number;
  /** Partitions of one consumer handled at once (default: partitions); order stays per partition. */
  partitionsConsumedConcurrently?: number;
}

function kafkaLogCreator(logger: Logger) {
  return () =>
    ({ level, log }: LogEntry) => {
      const { message, ...rest } = log;
      const meta = { component: 'kafkajs', ...rest };
      if (level === KafkaLogLevel.ERROR) logger.warn(message, meta);
      else if (level === KafkaLogLevel.WARN) logger.warn(message, meta);
      else logger.debug(message, meta);
    };
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
    }),
  ]).finally(() => timer && clearTimeout(timer));
}

/**
 * Kafka adapter on kafkajs: idempotent producer with acks=all; consumers in groups that
 * commit a partition's offsets only after the handler resolved for the whole batch.
 */
export class KafkaBus implements Bus {
  readonly kind = 'kafka' as const;
  private readonly kafka: Kafka;
  private readonly producers: Producer[];
  private nextProducer = 0;
  private readonly concurrency: number;
  private readonly admin: Admin;
  private readonly consumers = new Set<Consumer>();
  private readonly prefix: string;
  private readonly partitions: number;
  private readonly publishTimeoutMs: number;
  private readonly knownTopics = new Set<string>();

  constructor(options: KafkaBusOptions) {
    this.prefix = options.topicPrefix ?? '';
    this.partitions = options.partitions ?? 4;
    this.publishTimeoutMs = options.publishTimeoutMs ?? 5000;
    this.kafka = new Kafka({
      clientId: options.clientId,
      brokers: options.brokers,
      logLevel: KafkaLogLevel.WARN,
      logCreator: kafkaLogCreator(options.logger),
      connectionTimeout: 3000,
      requestTimeout: 10000,
      retry: { initialRetryTime: 100, retries: 8, maxRetryTime: 5000 },
    });
    this.producers = Array.from({ length: Math.max(1, options.producers ?? 4) }, () =>
      this.kafka.producer({
        idempotent: true,
        maxInFlightRequests: 1,
        createPartitioner: Partitioners.DefaultPartitioner,
        retry: { initialRetryTime: 100, retries: 5, maxRetryTime: 2000 },
      }),
    );
    this.concurrency = Math.max(1, options.partitionsConsumedConcurrently ?? this.partitions);
    this.admin = this.kafka.admin();
  }

  topicName(topic: string): string {
    return this.prefix + topic;
  }

  async start(): Promise<void> {
    await this.admin.connect();
    await Promise.all(this.producers.map((p) => p.connect()));
  }

  async stop(): Promise<void> {
    await Promise.allSettled([...this.consumers].map((c) => c.disconnect()));
    this.consumers.clear();
    await Promise.allSettled([...this.producers.map((p) => p.disconnect()), this.admin.disconnect()]);
  }

  async ensureTopics(topics: string[]): Promise<void> {
    const missing = topics.filter((t) => !this.knownTopics.has(t));
    if (missing.length === 0) return;
    await this.admin.createTopics({
      waitForLeaders: true,
      topics: missing.map((t) => ({ topic: this.topicName(t), numPartitions: this.partitions })),
    });
    missing.forEach((t) => this.knownTopics.add(t));
  }

  async healthy(): Promise<boolean> {
    try {
      await withTimeout(this.admin.describeCluster(), 2000, 'describeCluster');
      return true;
    } catch {
      return false;
    }
  }

  async publish(topic: string, messages: OutgoingMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const producer = this.producers[this.nextProducer];
    this.nextProducer = (this.nextProducer + 1) % this.producers.length;
    await withTimeout(
      producer.send({
        topic: this.topicName(topic),
        acks: -1,
        timeout: this.publishTimeoutMs,
        messages: messages.map((m) => ({ key: m.key, value: m.value, headers: m.headers })),
      }),
      this.publishTimeoutMs,
      'Kafka publish',
    );
  }

  async lag(groupId: string, topic: string): Promise<number> {
    const name = this.topicName(topic);
    const [committed, latest] = await Promise.all([
      this.admin.fetchOffsets({ groupId: this.prefix + groupId, topics: [name] }),
      this.admin.fetchTopicOffsets(name),
    ]);
    const committedByPartition = new Map<number, bigint>();
    for (const t of committed) {
      for (const p of t.partitions) committedByPartition.set(p.partition, BigInt(p.offset));
    }
    let total = 0n;
    for (const p of latest) {
      const high = BigInt(p.high);
      const low = BigInt(p.low);
      const done = committedByPartition.get(p.partition) ?? -1n;
      total += high - (done < 0n ? low : done);
    }
    return Number(total);
  }

  async subscribe({ groupId, topics, handler, fromBeginning = true }: SubscribeOptions): Promise<Subscription> {
    await this.ensureTopics(topics);
    const consumer = this.kafka.consumer({
      groupId: this.prefix + groupId,
      sessionTimeout: 30000,
      heartbeatInterval: 3000,
      maxWaitTimeInMs: 100,
      retry: { initialRetryTime: 200, retries: 10, maxRetryTime: 5000 },
    });
    await consumer.connect();
    await consumer.subscribe({ topics: topics.map((t) => this.topicName(t)), fromBeginning });
    const byPrefixedName = new Map(topics.map((t) => [this.topicName(t), t]));
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: this.concurrency,
      eachBatch: async ({ batch, heartbeat, resolveOffset, isRunning, isStale }) => {
        if (!isRunning() || isStale() || batch.messages.length === 0) return;
        const messages: ConsumedMessage[] = batch.messages.map((m) => ({
          topic: byPrefixedName.get(batch.topic) ?? batch.topic,
          partition: batch.partition,
          offset: m.offset,
          key: m.key?.toString() ?? '',
          value: m.value?.toString() ?? '',
          headers: Object.fromEntries(
            Object.entries(m.headers ?? {}).map(([k, v]) => [k, Array.isArray(v) ? String(v[0]) : String(v ?? '')]),
          ),
        }));
        await handler(messages, { heartbeat });
        const last = batch.messages[batch.messages.length - 1].offset;
        resolveOffset(last);
        await consumer.commitOffsets([
          { topic: batch.topic, partition: batch.partition, offset: (BigInt(last) + 1n).toString() },
        ]);
        await heartbeat();
      },
    });
    this.consumers.add(consumer);
    return {
      stop: async () => {
        this.consumers.delete(consumer);
        await consumer.disconnect();
      },
    };
  }
}
