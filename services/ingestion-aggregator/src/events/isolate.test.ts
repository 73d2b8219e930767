import fc from 'fast-check';
import { storeIsolating } from './isolate';
import { recordErrorOf } from './record-errors';

/** A Postgres-like error with a SQLSTATE. */
function pgError(code: string, message = 'boom'): Error {
  return Object.assign(new Error(message), { code });
}

/**
 * A fake store that refuses a whole batch (as one Postgres statement does) when it holds a bad
 * item, and otherwise keeps every item; it records each attempt.
 */
class FakeStore {
  readonly stored: number[] = [];
  readonly attempts: number[][] = [];
  constructor(
    private readonly bad: Set<number>,
    private readonly code = '22P02',
  ) {}

  attempt = async (items: number[]): Promise<number> => {
    this.attempts.push(items);
    if (items.some((i) => this.bad.has(i))) throw pgError(this.code, `bad item in ${items.length}`);
    this.stored.push(...items);
    return items.length;
  };
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe('storeIsolating', () => {
  it('stores a clean batch in one attempt', async () => {
    const store = new FakeStore(new Set());
    const out = await storeIsolating(range(100), store.attempt, recordErrorOf);
    expect(out).toEqual({ results: [100], failed: [] });
    expect(store.attempts).toHaveLength(1);
  });

  it('isolates each bad record, stores every other one in order, with bounded attempts', async () => {
    const bad = new Set([0, 17, 18, 63, 99]);
    const store = new FakeStore(bad);
    const out = await storeIsolating(range(100), store.attempt, recordErrorOf);
    expect(out.failed.map((f) => f.item)).toEqual([0, 17, 18, 63, 99]);
    expect(out.failed[0].error).toEqual({ code: '22P02', message: 'bad item in 1' });
    expect(store.stored).toEqual(range(100).filter((i) => !bad.has(i)));
    expect(out.results.reduce((a, b) => a + b, 0)).toBe(95);
    expect(store.attempts.length).toBeLessThanOrEqual(1 + 2 * bad.size * Math.ceil(Math.log2(100)));
  });

  it('for any set of bad records: each is failed alone, every good one stored exactly once, in order', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 300 }), fc.uniqueArray(fc.nat(299)), async (n, badList) => {
        const bad = new Set(badList.filter((b) => b < n));
        const store = new FakeStore(bad, '54001');
        const out = await storeIsolating(range(n), store.attempt, recordErrorOf);
        expect(out.failed.map((f) => f.item)).toEqual(range(n).filter((i) => bad.has(i)));
        expect(out.failed.every((f) => f.error.code === '54001')).toBe(true);
        expect(store.stored).toEqual(range(n).filter((i) => !bad.has(i)));
      }),
      { numRuns: 200 },
    );
  });

  it.each([
    ['connection lost (no SQLSTATE)', Object.assign(new Error('Connection terminated unexpectedly'), {})],
    ['serialization failure', pgError('40001')],
    ['deadlock', pgError('40P01')],
    ['admin shutdown', pgError('57P01')],
    ['statement timeout', pgError('57014')],
    ['out of disk', pgError('53100')],
    ['undefined table (a bug, not a record)', pgError('42P01')],
  ])('rethrows a %s without isolating anything, so the whole batch is retried', async (_, error) => {
    const attempts: number[][] = [];
    const attempt = async (items: number[]) => {
      attempts.push(items);
      throw error;
    };
    await expect(storeIsolating(range(10), attempt, recordErrorOf)).rejects.toBe(error);
    expect(attempts).toEqual([range(10)]);
  });

  it('rethrows a transient error met while halving (halves stored before it are redone by the retry, deduplicated)', async () => {
    let calls = 0;
    const attempt = async (items: number[]) => {
      calls += 1;
      if (calls === 1) throw pgError('22P05');
      if (calls === 3) throw pgError('08006');
      return items.length;
    };
    await expect(storeIsolating(range(8), attempt, recordErrorOf)).rejects.toMatchObject({ code: '08006' });
  });
});

describe('recordErrorOf', () => {
  it('ties data exceptions (class 22) and program limits (class 54) to the record, with the detail', () => {
    const err = Object.assign(new Error('invalid input syntax for type json'), {
      code: '22P02',
      detail: 'Unicode low surrogate must follow a high surrogate.',
    });
    expect(recordErrorOf(err)).toEqual({
      code: '22P02',
      message: 'invalid input syntax for type json: Unicode low surrogate must follow a high surrogate.',
    });
    for (const code of ['22P05', '22021', '22003', '22008', '2202E', '54001', '54000']) {
      expect(recordErrorOf(pgError(code))).toEqual({ code, message: 'boom' });
    }
  });

  it('ties nothing else to a record', () => {
    for (const code of ['40001', '40P01', '57P01', '57014', '53100', '08006', '23505', '42P01', 'XX000']) {
      expect(recordErrorOf(pgError(code))).toBeUndefined();
    }
    expect(recordErrorOf(new Error('socket hang up'))).toBeUndefined();
    expect(recordErrorOf(undefined)).toBeUndefined();
  });
});
