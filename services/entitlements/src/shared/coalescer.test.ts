import { Coalescer } from './coalescer';

/** A loadMany whose calls are held until released, recording the keys of each call. */
function held() {
  const calls: Array<{ keys: number[]; release: (fail?: Error) => void }> = [];
  const loadMany = (keys: number[]) =>
    new Promise<Array<string | Promise<string>>>((resolve, reject) => {
      calls.push({ keys, release: (fail) => (fail ? reject(fail) : resolve(keys.map((k) => `v${k}`))) });
    });
  return { calls, loadMany };
}

const turn = () => new Promise((r) => setImmediate(r));

describe('Coalescer', () => {
  it('sends the keys asked in one turn together, at once, each answered with its own value in order', async () => {
    const { calls, loadMany } = held();
    const c = new Coalescer(loadMany, 1);
    const answers = Promise.all([c.load(1), c.load(2), c.load(3)]);
    await turn();
    expect(calls.map((x) => x.keys)).toEqual([[1, 2, 3]]);
    calls[0].release();
    expect(await answers).toEqual(['v1', 'v2', 'v3']);
  });

  it('keys asked while maxInFlight calls are out wait and leave together when one lands', async () => {
    const { calls, loadMany } = held();
    const c = new Coalescer(loadMany, 2);
    const first = c.load(1);
    await turn();
    const second = c.load(2);
    await turn();
    const later = [c.load(3), c.load(4)];
    await turn();
    await turn();
    expect(calls.map((x) => x.keys)).toEqual([[1], [2]]);
    calls[0].release();
    expect(await first).toBe('v1');
    await turn();
    await turn();
    expect(calls.map((x) => x.keys)).toEqual([[1], [2], [3, 4]]);
    calls[1].release();
    calls[2].release();
    expect(await Promise.all([second, ...later])).toEqual(['v2', 'v3', 'v4']);
  });

  it('no call carries more than maxBatch keys', async () => {
    const { calls, loadMany } = held();
    const c = new Coalescer(loadMany, 1, 2);
    const answers = Promise.all([1, 2, 3, 4, 5].map((k) => c.load(k)));
    await turn();
    calls[0].release();
    await turn();
    await turn();
    calls[1].release();
    await turn();
    await turn();
    calls[2].release();
    expect(await answers).toEqual(['v1', 'v2', 'v3', 'v4', 'v5']);
    expect(calls.map((x) => x.keys)).toEqual([[1, 2], [3, 4], [5]]);
  });

  it('a failed call fails every key of its batch, and the next keys go in a new call', async () => {
    const { calls, loadMany } = held();
    const c = new Coalescer(loadMany, 1);
    const a = c.load(1);
    const b = c.load(2);
    await turn();
    calls[0].release(new Error('down'));
    await expect(a).rejects.toThrow('down');
    await expect(b).rejects.toThrow('down');
    const d = c.load(3);
    await turn();
    calls[1].release();
    expect(await d).toBe('v3');
  });

  it('a value given as a promise fails alone; a call answering another number of values fails its batch', async () => {
    const one = new Coalescer<number, string>(async (keys) => keys.map((k) => (k === 2 ? Promise.reject(new Error('bad 2')) : `v${k}`)));
    const [x, y, z] = [one.load(1), one.load(2), one.load(3)];
    expect(await x).toBe('v1');
    await expect(y).rejects.toThrow('bad 2');
    expect(await z).toBe('v3');
    const short = new Coalescer<number, string>(async () => ['only one']);
    const [p, q] = [short.load(1), short.load(2)];
    await expect(p).rejects.toThrow('a batch of 2 keys answered 1 values');
    await expect(q).rejects.toThrow('a batch of 2 keys answered 1 values');
  });

  it('a loadMany that throws at once fails its batch and the coalescer goes on', async () => {
    let fail = true;
    const c = new Coalescer<number, string>((keys) => {
      if (fail) throw new Error('sync');
      return Promise.resolve(keys.map((k) => `v${k}`));
    }, 1);
    await expect(c.load(1)).rejects.toThrow('sync');
    fail = false;
    expect(await c.load(2)).toBe('v2');
  });
});
