import { BatchJoiner, type PartitionBatch } from './join';

const batch = (topic: string, partition: number, offsets: number[]): PartitionBatch => ({
  topic,
  partition,
  messages: offsets.map((o) => ({ topic, partition, offset: String(o), key: 'k', value: `${partition}:${o}`, headers: {} })),
  last: String(offsets[offsets.length - 1]),
});

describe('BatchJoiner', () => {
  it('runs the batches of one topic added in one turn of the event loop as one; a later one alone', async () => {
    const runs: string[][] = [];
    const joiner = new BatchJoiner(async (batches) => void runs.push(batches.map((b) => `${b.topic}/${b.partition}@${b.last}`)));
    const first = [joiner.add(batch('t', 0, [1, 2])), joiner.add(batch('t', 1, [5])), joiner.add(batch('u', 0, [9]))];
    await Promise.resolve();
    const sameTurn = joiner.add(batch('t', 2, [7]));
    await Promise.all([...first, sameTurn]);
    await joiner.add(batch('t', 0, [3]));
    expect(runs).toEqual([['t/0@2', 't/1@5', 't/2@7'], ['u/0@9'], ['t/0@3']]);
  });

  it("a failed run rejects every batch of its group, not the next group's", async () => {
    let fail = true;
    const joiner = new BatchJoiner(async () => {
      if (fail) throw new Error('store failed');
    });
    const group = [joiner.add(batch('t', 0, [1])), joiner.add(batch('t', 1, [1]))];
    const settled = await Promise.allSettled(group);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    await expect(joiner.add(batch('t', 0, [1]))).resolves.toBeUndefined();
  });
});
