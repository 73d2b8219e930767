import type { ConsumedMessage } from './types';

/** One partition's batch, as a fetch delivered it. */
export interface PartitionBatch {
  topic: string;
  partition: number;
  messages: ConsumedMessage[];
  /** The offset of its last message. */
  last: string;
}

/**
 * Joins the batches of one topic that arrive in the same turn of the event loop (kafkajs hands
 * the batches of one fetch to its workers together) and runs them as one: `run` gets every
 * batch of the group, and each `add` resolves or rejects with it. A partition has at most one
 * batch out at a time (kafkajs fetches again only once every batch of a fetch is done), so a
 * group never holds two batches of one partition and each partition's order is kept.
 */
export class BatchJoiner {
  private readonly open = new Map<string, PartitionBatch[]>();

  constructor(private readonly run: (batches: PartitionBatch[]) => Promise<void>) {}

  add(batch: PartitionBatch): Promise<void> {
    const group = this.open.get(batch.topic);
    if (group) {
      group.push(batch);
      return this.pending.get(group)!;
    }
    const batches = [batch];
    this.open.set(batch.topic, batches);
    const done = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      this.open.delete(batch.topic);
      this.pending.delete(batches);
      return this.run(batches);
    });
    this.pending.set(batches, done);
    return done;
  }

  private readonly pending = new Map<PartitionBatch[], Promise<void>>();
}
