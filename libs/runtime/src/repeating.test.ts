import { createLogger } from '@billstream/logger';
import { Repeating } from './repeating';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Waits until `done()` holds (a loaded machine may run the rounds late, never early). */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !done(); i += 1) await sleep(10);
}

/** A job's schedule: rounds never overlap, a failure is logged and retried, stop waits for the round in flight. */
describe('Repeating', () => {
  it('runs one round at a time, the next an interval after the last ended', async () => {
    let inFlight = 0;
    let most = 0;
    let rounds = 0;
    const schedule = new Repeating({
      intervalMs: 5,
      logger: createLogger({ service: 'test', level: 'silent' }),
      failure: 'round failed',
      run: async () => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        await sleep(20);
        inFlight -= 1;
        rounds += 1;
        return rounds;
      },
    });
    schedule.start();
    schedule.start();
    await until(() => rounds >= 3);
    await schedule.stop();
    expect(most).toBe(1);
    expect(rounds).toBeGreaterThanOrEqual(3);
    expect(inFlight).toBe(0);
    const after = rounds;
    await sleep(40);
    expect(rounds).toBe(after);
  });

  it('logs a failed round and retries at the next, handing results to done', async () => {
    const logger = createLogger({ service: 'test', level: 'silent' });
    const warn = jest.spyOn(logger, 'warn');
    const results: number[] = [];
    let calls = 0;
    const schedule = new Repeating({
      intervalMs: 2,
      logger,
      failure: 'round failed; will retry',
      run: async () => {
        calls += 1;
        if (calls === 1) throw new Error('boom');
        return calls;
      },
      done: (n) => results.push(n),
    });
    schedule.start();
    await until(() => results.length > 0);
    await schedule.stop();
    expect(warn).toHaveBeenCalledWith('round failed; will retry', expect.objectContaining({ err: expect.any(Error) }));
    expect(results[0]).toBe(2);
  });

  it('never starts with an interval of 0', async () => {
    let calls = 0;
    const schedule = new Repeating({ intervalMs: 0, logger: createLogger({ service: 'test', level: 'silent' }), failure: 'x', run: async () => (calls += 1) });
    schedule.start();
    await sleep(20);
    await schedule.stop();
    expect(calls).toBe(0);
  });

  it('runs a poked round at once when idle, and right after the round in flight when busy', async () => {
    let rounds = 0;
    let release: () => void = () => undefined;
    const schedule = new Repeating({
      intervalMs: 60_000,
      immediate: true,
      logger: createLogger({ service: 'test', level: 'silent' }),
      failure: 'x',
      run: async () => {
        rounds += 1;
        if (rounds === 2) await new Promise<void>((resolve) => (release = resolve));
        return rounds;
      },
    });
    schedule.poke();
    await sleep(20);
    expect(rounds).toBe(0);
    schedule.start();
    await until(() => rounds >= 1);
    expect(rounds).toBe(1);
    schedule.poke();
    await until(() => rounds >= 2);
    schedule.poke();
    schedule.poke();
    await sleep(20);
    expect(rounds).toBe(2);
    release();
    await until(() => rounds >= 3);
    await sleep(20);
    await schedule.stop();
    expect(rounds).toBe(3);
  });
});
