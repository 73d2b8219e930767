import { Admin, Consumer, ConsumerRunConfig, Kafka, logLevel as KafkaLogLevel, LogEntry, Partitioners, Producer } from 'kafkajs';
import type { Logger } from '@billstream/logger';
import { addConsumerLagSource, recordPublish } from '@billstream/observability';
import { handleObserved } from './observed';
import { BatchJoiner, type PartitionBatch } from './join';
import { leaveGroupMember } from './leave-group';
import type { Bus, ConsumedMessage, ConsumingState, OutgoingMessage, SubscribeOptions, Subscription } from './types';
import { PATCHED_KAFKAJS_VERSION, patchKafkajsRequestQueue } from './request-queue-patch';

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
  /** Consumer group membership and reconnection timing; see KAFKA_TIMING_DEFAULTS. */
  timing?: Partial<KafkaTiming>;
}

/** How fast consumer groups notice dead members and how fast clients come back after an outage. */
export interface KafkaTiming {
  /**
   * A group member that sends no heartbeat for this long is dead: its partitions move to the
   * others, and a restarted process that joins waits at most this long for the old member.
   */
  sessionTimeoutMs: number;
  /** How often a member heartbeats (well under the session timeout). */
  heartbeatIntervalMs: number;
  /** How long a rebalance waits for live members to finish their batch and rejoin. */
  rebalanceTimeoutMs: number;
  /** Longest pause between two attempts to reach the broker (connections, fetches, joins, sends). */
  retryMaxMs: number;
  /**
   * How long the broker holds a fetch that finds nothing new. A message that arrives meanwhile
   * answers the fetch at once, so this bounds only how often an idle consumer asks (ADR 0030,
   * amended). Members heartbeat between fetches: keep it well under the session timeout.
   */
  fetchMaxWaitMs: number;
  /** Bytes a fetch waits for, up to `fetchMaxWaitMs` (1: the first message answers it; ADR 0030, amended). */
  fetchMinBytes: number;
}

/**
 * 6 s is the smallest session a default broker accepts (group.min.session.timeout.ms): a dead
 * member's partitions move after about 7 s. Retries back off to 1 s at most, so a broker that
 * comes back is used within a second.
 */
export const KAFKA_TIMING_DEFAULTS: KafkaTiming = {
  sessionTimeoutMs: 6000,
  heartbeatIntervalMs: 1000,
  rebalanceTimeoutMs: 10_000,
  retryMaxMs: 1000,
  fetchMaxWaitMs: 1000,
  fetchMinBytes: 1,
};

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
  private readonly consumerKafka: Kafka;
  private readonly producers: Producer[];
  private nextProducer = 0;
  private readonly concurrency: number;
  private readonly admin: Admin;
  private readonly subscriptions = new Set<Subscription>();
  private readonly prefix: string;
  private readonly partitions: number;
  private readonly publishTimeoutMs: number;
  private readonly knownTopics = new Set<string>();
  private readonly timing: KafkaTiming;
  private readonly logger: Logger;

  constructor(options: KafkaBusOptions) {
    this.prefix = options.topicPrefix ?? '';
    this.partitions = options.partitions ?? 4;
    this.publishTimeoutMs = options.publishTimeoutMs ?? 5000;
    this.timing = { ...KAFKA_TIMING_DEFAULTS, ...options.timing };
    this.logger = options.logger;
    // kafkajs 2.2.4 spins every idle connection on a 1 ms timer (ADR 0030).
    if (patchKafkajsRequestQueue() === 'not applied') {
      this.logger.warn(`kafkajs is not ${PATCHED_KAFKAJS_VERSION}: its request queue is left unpatched; review libs/bus/src/request-queue-patch.ts`);
    }
    const client = (retries: number) =>
      new Kafka({
        clientId: options.clientId,
        brokers: options.brokers,
        logLevel: KafkaLogLevel.WARN,
        logCreator: kafkaLogCreator(options.logger),
        connectionTimeout: 3000,
        requestTimeout: 10000,
        retry: { initialRetryTime: 100, retries, maxRetryTime: this.timing.retryMaxMs },
      });
    this.kafka = client(8);
    // Consumers retry without end, connections included: a kafkajs consumer that gives up
    // restarts as a new group member, and a new member waits for the old member's session
    // to expire before it consumes (the 30 s after a broker outage of issue #11).
    this.consumerKafka = client(Number.MAX_SAFE_INTEGER);
    this.producers = Array.from({ length: Math.max(1, options.producers ?? 4) }, () =>
      this.kafka.producer({
        idempotent: true,
        maxInFlightRequests: 1,
        createPartitioner: Partitioners.DefaultPartitioner,
        retry: { initialRetryTime: 100, retries: 5, maxRetryTime: this.timing.retryMaxMs },
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
    await Promise.allSettled([...this.subscriptions].map((s) => s.stop()));
    await Promise.allSettled([...this.producers.map((p) => p.disconnect()), this.admin.disconnect()]);
  }

  async ensureTopics(topics: string[]): Promise<void> {
    const missing = topics.filter((t) => !this.knownTopics.has(t));
    if (missing.length === 0) return;
    // Another process (or service of this one) may be creating the same topic this moment:
    // the broker then answers the leader wait with a retriable "does not host this
    // topic-partition" for a while, longer on a loaded machine than kafkajs's own retries last.
    for (let attempt = 1; ; attempt += 1) {
      try {
        await this.admin.createTopics({
          waitForLeaders: true,
          topics: missing.map((t) => ({ topic: this.topicName(t), numPartitions: this.partitions })),
        });
        break;
      } catch (err) {
        const e = err as { retriable?: boolean; name?: string; message?: string };
        const retriable = e.retriable === true || e.name === 'KafkaJSNumberOfRetriesExceeded' || /topic-partition|leader/i.test(e.message ?? '');
        if (!retriable || attempt >= 6) throw err;
        this.logger.warn('topics not ready yet; will retry', { topics: missing, attempt, err });
        await new Promise((r) => setTimeout(r, 250 * attempt));
      }
    }
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
    try {
      await this.send(producer, topic, messages);
    } catch (err) {
      recordPublish(topic, messages.length, false);
      throw err;
    }
    recordPublish(topic, messages.length, true);
  }

  private async send(producer: Producer, topic: string, messages: OutgoingMessage[]): Promise<void> {
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

  /**
   * Starts a group consumer in the background and answers at once: the group join (which
   * waits for the session of a killed predecessor to expire) never delays a service's start.
   * Until it is consuming, messages wait in Kafka; offsets are committed only after the
   * handler resolved, so nothing is lost while it joins.
   */
  async subscribe(options: SubscribeOptions): Promise<Subscription> {
    const consumer = this.consumerKafka.consumer({
      groupId: this.prefix + options.groupId,
      sessionTimeout: this.timing.sessionTimeoutMs,
      heartbeatInterval: this.timing.heartbeatIntervalMs,
      rebalanceTimeout: this.timing.rebalanceTimeoutMs,
      maxWaitTimeInMs: this.timing.fetchMaxWaitMs,
      minBytes: this.timing.fetchMinBytes,
      // Every restart after a crash is the bus's own (below), never kafkajs's.
      retry: { initialRetryTime: 100, maxRetryTime: this.timing.retryMaxMs, retries: Number.MAX_SAFE_INTEGER, restartOnFailure: async () => false },
    });
    const state = { stopped: false };
    const consuming = watchConsuming(consumer, options.onJoin);
    let running = this.runConsumer(consumer, options, state);
    let memberId: string | undefined;
    consumer.on(consumer.events.GROUP_JOIN, (event) => {
      memberId = event.payload.memberId;
    });
    // A crashed consumer is started again, as at subscribe: kafkajs would restart it only
    // after a retriable error, and after another (e.g. "Failed to find group coordinator" while
    // a broker comes back) it stayed stopped for good. The restart joins as a new member; the
    // crashed member tried to leave, which fails while the broker is down, so the new member
    // first removes it (see leaveGroupMember).
    consumer.on(consumer.events.CRASH, (event) => {
      if (state.stopped) return;
      const crashed = memberId;
      memberId = undefined;
      this.logger.warn('consumer crashed; starting it again', { groupId: options.groupId, memberId: crashed, err: event.payload.error });
      running = new Promise<void>((r) => setTimeout(r, this.timing.retryMaxMs)).then(() =>
        state.stopped ? undefined : this.runConsumer(consumer, options, state, crashed),
      );
    });
    // The group's lag on each of its topics, read from the broker when Prometheus scrapes.
    // (A group that commits no offsets has no lag to tell.)
    const removeLag =
      options.commitOffsets === false
        ? () => undefined
        : addConsumerLagSource(async () =>
            Promise.all(options.topics.map(async (topic) => ({ labels: { group: options.groupId, topic }, value: await this.lag(options.groupId, topic) }))),
          );
    const subscription: Subscription = {
      stop: async () => {
        if (state.stopped) return;
        state.stopped = true;
        removeLag();
        this.subscriptions.delete(subscription);
        // A join in progress ends within the rebalance timeout; stop does not wait longer.
        await withTimeout(running, this.timing.rebalanceTimeoutMs, 'consumer start').catch(() => undefined);
        await consumer.disconnect();
      },
      consuming: () => consuming(),
    };
    this.subscriptions.add(subscription);
    return subscription;
  }

  /**
   * Connects, subscribes and runs the consumer, trying again until it runs or is stopped.
   * `crashedMember`: the member id this consumer had before it crashed, removed from the
   * group before the consumer joins again.
   */
  private async runConsumer(consumer: Consumer, options: SubscribeOptions, state: { stopped: boolean }, crashedMember?: string): Promise<void> {
    const { groupId, topics, fromBeginning = true } = options;
    for (let attempt = 1; !state.stopped; attempt += 1) {
      try {
        await this.ensureTopics(topics);
        await consumer.connect();
        if (crashedMember) {
          const memberId = crashedMember;
          crashedMember = undefined;
          // At worst (it fails) the join waits for the crashed member's session to expire.
          await leaveGroupMember(this.kafka, this.prefix + groupId, memberId).then(
            (outcome) => this.logger.info('removed the crashed consumer from its group', { groupId, memberId, outcome }),
            (err) => this.logger.warn('could not remove the crashed consumer from its group; the join waits for its session to expire', { groupId, memberId, err }),
          );
        }
        await consumer.subscribe({ topics: topics.map((t) => this.topicName(t)), fromBeginning });
        if (state.stopped) return;
        // Resolves once joined; from then on kafkajs rejoins and reconnects by itself.
        await consumer.run(this.runConfig(consumer, options));
        return;
      } catch (err) {
        this.logger.warn('consumer could not start; will retry', { groupId, attempt, err });
        await new Promise((r) => setTimeout(r, Math.min(this.timing.retryMaxMs, 100 * 2 ** attempt)));
      }
    }
  }

  private runConfig(consumer: Consumer, { topics, handler, groupId, commitOffsets = true, joinPartitions = false }: SubscribeOptions): ConsumerRunConfig {
    const byPrefixedName = new Map(topics.map((t) => [this.topicName(t), t]));
    let beat: () => Promise<void> = async () => undefined;
    const handle = async (batches: PartitionBatch[]) => {
      const messages = batches.length === 1 ? batches[0].messages : batches.flatMap((b) => b.messages);
      await handleObserved(groupId, messages, () => handler(messages, { heartbeat: () => beat() }));
      if (commitOffsets) {
        await consumer.commitOffsets(batches.map((b) => ({ topic: b.topic, partition: b.partition, offset: (BigInt(b.last) + 1n).toString() })));
      }
    };
    const joiner = joinPartitions ? new BatchJoiner(handle) : undefined;
    return {
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: this.concurrency,
      eachBatch: async ({ batch, heartbeat, resolveOffset, isRunning, isStale }) => {
        if (!isRunning() || isStale() || batch.messages.length === 0) return;
        beat = heartbeat;
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
        const last = batch.messages[batch.messages.length - 1].offset;
        const part: PartitionBatch = { topic: batch.topic, partition: batch.partition, messages, last };
        await (joiner ? joiner.add(part) : handle([part]));
        resolveOffset(last);
        await heartbeat();
      },
    };
  }
}

/** A consumer that has not fetched for this long is not consuming (it fetches every 100 ms or so when idle). */
const CONSUMING_FETCH_GAP_MS = 1000;

/**
 * Follows a consumer's instrumentation events: consuming while in its group and fetching; a
 * new session on each join and on fetches resuming after a gap (`ConsumingState`).
 */
function watchConsuming(consumer: Consumer, onJoin?: () => void): () => ConsumingState {
  let joined = false;
  let lastFetch = 0;
  let session = 0;
  consumer.on(consumer.events.GROUP_JOIN, () => {
    joined = true;
    session += 1;
    lastFetch = Date.now();
    onJoin?.();
  });
  for (const event of [consumer.events.REBALANCING, consumer.events.CRASH, consumer.events.STOP, consumer.events.DISCONNECT]) {
    consumer.on(event, () => {
      joined = false;
    });
  }
  consumer.on(consumer.events.FETCH, () => {
    const now = Date.now();
    if (now - lastFetch >= CONSUMING_FETCH_GAP_MS) session += 1;
    lastFetch = now;
  });
  return () => ({ consuming: joined && Date.now() - lastFetch < CONSUMING_FETCH_GAP_MS, session });
}
