import { resultOf } from './worker';
import type { ClaimedTask } from './task-store';

const task: ClaimedTask = {
  endpointId: 'we_1',
  eventId: 'evt_1',
  eventName: 'customer.created',
  attempts: 0,
  claimId: 'c1',
  url: 'https://hooks.example.com/',
  secret: 'whsec_x',
  body: '{}',
};
const schedule = [5000, 300_000];
const now = new Date('2026-01-01T00:00:00Z');
const done = (ok: boolean, responseCode: number | null, error: string | null) => ({
  kind: 'done' as const,
  ok,
  responseCode,
  error,
  durationMs: 12,
  attemptedAt: now,
});

describe('resultOf (what an attempt does to its task)', () => {
  it('a 2xx finishes the task with a succeeded record and no retry', () => {
    const r = resultOf(task, done(true, 204, null), schedule, now);
    expect(r.status).toBe('succeeded');
    expect(r.nextAttemptAt).toBeNull();
    expect(r.delivery).toMatchObject({ status: 'succeeded', attempt: 1, responseCode: 204, error: null, retryAt: null });
    expect(r.delivery.id).toMatch(/^whd_[0-9A-Z]{26}$/);
  });

  it('a failure plans the next retry on the schedule', () => {
    const first = resultOf(task, done(false, 500, 'endpoint answered HTTP 500'), schedule, now);
    expect(first.status).toBe('pending');
    expect(first.nextAttemptAt).toEqual(new Date(now.getTime() + 5000));
    expect(first.delivery).toMatchObject({ status: 'failed', attempt: 1, responseCode: 500, retryAt: first.nextAttemptAt });
    const second = resultOf({ ...task, attempts: 1 }, done(false, null, 'no response within 10000 ms'), schedule, now);
    expect(second.nextAttemptAt).toEqual(new Date(now.getTime() + 300_000));
    expect(second.delivery.attempt).toBe(2);
  });

  it('gives up once the schedule is used up', () => {
    const last = resultOf({ ...task, attempts: 2 }, done(false, 503, 'endpoint answered HTTP 503'), schedule, now);
    expect(last.status).toBe('failed');
    expect(last.nextAttemptAt).toBeNull();
    expect(last.delivery).toMatchObject({ attempt: 3, status: 'failed', retryAt: null });
  });
});
