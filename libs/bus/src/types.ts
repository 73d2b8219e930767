/** Topics of the platform. Names are logical; adapters may prefix them. */
export const TOPICS = {
  customerEvents: 'customer-events',
  walletEvents: 'wallet-events',
  usageEvents: 'usage-events',
  billingEvents: 'billing-events',
  /** Customers whose usage events were stored (ingestion-aggregator -> billing; ADR 0024). */
  usageRecorded: 'usage-recorded',
} as const;

export interface OutgoingMessage {
  /** Partition key: messages with one key keep their order. */
  key: string;
  value: string;
  headers?: Record<string, string>;
}

export interface ConsumedMessage {
  topic: string;
  partition: number;
  offset: string;
  key: string;
  value: string;
  headers: Record<string, string>;
}

export interface BatchContext {
  /** Keeps group membership alive during long batches. */
  heartbeat(): Promise<void>;
}

/** Handles one batch; resolving means every message of it is done (its effects committed). */
export type BatchHandler = (messages: ConsumedMessage[], ctx: BatchContext) => Promise<void>;

export interface SubscribeOptions {
  groupId: string;
  topics: string[];
  handler: BatchHandler;
  /** Where a group with no committed offset starts; default: the beginning. */
  fromBeginning?: boolean;
  /**
   * false: offsets are never committed (default true). For a group of one process alone that
   * reads only what comes while it runs (`fromBeginning: false`), e.g. every replica hearing
   * every message of a topic: with no offsets, Kafka drops the group once its process left.
   */
  commitOffsets?: boolean;
  /** Called each time the consumer joins its group (Kafka), or once when subscribed (in-process). */
  onJoin?: () => void;
  /**
   * true: the batches of several partitions of a topic that one fetch delivers together go to
   * the handler as one call (each partition's messages in order, one partition after another),
   * and their offsets are committed together once it resolved; when it fails, each of them is
   * delivered again. For a handler whose cost is mostly per call (a transaction, a publish), so
   * that one fetch costs one call rather than one per partition. Default false: one call per
   * partition's batch.
   */
  joinPartitions?: boolean;
}

/** Whether a subscription is consuming now (`Subscription.consuming`). */
export interface ConsumingState {
  /** In its group and fetched from the broker within the last second. */
  consuming: boolean;
  /**
   * Grows each time consuming starts anew (joined the group, or fetches resumed after a gap):
   * a holder of anything derived from the messages learns that some may have come late.
   */
  session: number;
}

export interface Subscription {
  stop(): Promise<void>;
  /** Where the consumer stands (cheap: no call to the broker). */
  consuming(): ConsumingState;
}

/**
 * The one bus port. `publish` resolves only once the messages are durable
 * (Kafka acks=all, or every in-process subscriber handled them).
 */
export interface Bus {
  readonly kind: 'kafka' | 'in-process';
  start(): Promise<void>;
  stop(): Promise<void>;
  ensureTopics(topics: string[]): Promise<void>;
  publish(topic: string, messages: OutgoingMessage[]): Promise<void>;
  subscribe(options: SubscribeOptions): Promise<Subscription>;
  healthy(): Promise<boolean>;
  /** Messages not yet consumed by a group, summed over the topic's partitions. */
  lag(groupId: string, topic: string): Promise<number>;
}
