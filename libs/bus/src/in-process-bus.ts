import { recordPublish } from '@billstream/observability';
import { handleObserved } from './observed';
import type { Bus, ConsumedMessage, OutgoingMessage, SubscribeOptions, Subscription } from './types';

interface Group {
  groupId: string;
  topics: Set<string>;
  handler: SubscribeOptions['handler'];
}

/**
 * In-process adapter for the embedded default and fast tests. Delivery is synchronous:
 * `publish` resolves after every subscribed group handled the messages, and rejects when
 * one failed, so a caller (the outbox relay) marks nothing that was not handled.
 */
export class InProcessBus implements Bus {
  readonly kind = 'in-process' as const;
  private readonly groups = new Map<string, Group>();
  private readonly offsets = new Map<string, number>();

  async start(): Promise<void> {}

  async stop(): Promise<void> {
    this.groups.clear();
  }

  async ensureTopics(): Promise<void> {}

  async healthy(): Promise<boolean> {
    return true;
  }

  async lag(): Promise<number> {
    return 0;
  }

  async publish(topic: string, messages: OutgoingMessage[]): Promise<void> {
    if (messages.length === 0) return;
    recordPublish(topic, messages.length, true);
    const base = this.offsets.get(topic) ?? 0;
    this.offsets.set(topic, base + messages.length);
    const consumed: ConsumedMessage[] = messages.map((m, i) => ({
      topic,
      partition: 0,
      offset: String(base + i),
      key: m.key,
      value: m.value,
      headers: m.headers ?? {},
    }));
    for (const group of [...this.groups.values()]) {
      if (group.topics.has(topic)) {
        await handleObserved(group.groupId, consumed, () => group.handler(consumed, { heartbeat: async () => {} }));
      }
    }
  }

  async subscribe({ groupId, topics, handler, onJoin }: SubscribeOptions): Promise<Subscription> {
    if (this.groups.has(groupId)) throw new Error(`group ${groupId} already subscribed`);
    this.groups.set(groupId, { groupId, topics: new Set(topics), handler });
    onJoin?.();
    return {
      stop: async () => {
        this.groups.delete(groupId);
      },
      // Delivery is synchronous with the publish: nothing ever waits to be consumed.
      consuming: () => ({ consuming: this.groups.has(groupId), session: 0 }),
    };
  }
}
