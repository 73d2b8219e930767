import type { Db } from '@billstream/db';
import { testLogger, waitFor } from '@billstream/testing';
import type { WebhookSettings } from '../config';
import type { Attempt, AttemptOutcome, WebhookSender } from './sender';
import type { ClaimedTask, ClaimOptions, TaskResult, TaskStore } from './task-store';
import { DeliveryWorker } from './worker';

/** A task store in memory that honours the claim limits the way the SQL does (it needs no connection). */
class FakeTaskStore {
  readonly tasks: Array<ClaimedTask & { claimed: boolean }> = [];
  readonly completed: TaskResult[] = [];
  readonly released: ClaimedTask[] = [];

  add(endpointId: string, n: number): void {
    for (let i = 0; i < n; i += 1) {
      this.tasks.push({ endpointId, eventId: `evt_${endpointId}_${i}`, eventName: 'wallet.created', attempts: 0, claimId: '', url: `https://${endpointId}.example.com/`, secret: 'whsec_x', body: '{}', claimed: false });
    }
  }

  async claim(_conn: Db, o: ClaimOptions): Promise<ClaimedTask[]> {
    const taken: ClaimedTask[] = [];
    const perEndpoint = new Map<string, number>();
    for (const t of this.tasks) {
      if (t.claimed || taken.length >= o.limit) continue;
      const n = perEndpoint.get(t.endpointId) ?? 0;
      if (n + (o.inFlight[t.endpointId] ?? 0) >= o.endpointCap) continue;
      perEndpoint.set(t.endpointId, n + 1);
      t.claimed = true;
      taken.push({ ...t, claimId: o.claimId });
    }
    return taken;
  }

  async complete(_conn: Db, results: TaskResult[]): Promise<void> {
    this.completed.push(...results);
  }

  async release(_conn: Db, tasks: ClaimedTask[]): Promise<void> {
    this.released.push(...tasks);
  }
}

/** Answers `ok` endpoints at once; `dead` ones only end when aborted. Tracks concurrency. */
class FakeSender {
  readonly inFlight = new Map<string, number>();
  readonly maxInFlight = new Map<string, number>();
  maxTotal = 0;
  private readonly hanging: Array<() => void> = [];

  private total(): number {
    return [...this.inFlight.values()].reduce((a, b) => a + b, 0);
  }

  async send(attempt: Attempt): Promise<AttemptOutcome> {
    const host = new URL(attempt.url).hostname.split('.')[0];
    this.inFlight.set(host, (this.inFlight.get(host) ?? 0) + 1);
    this.maxInFlight.set(host, Math.max(this.maxInFlight.get(host) ?? 0, this.inFlight.get(host)!));
    this.maxTotal = Math.max(this.maxTotal, this.total());
    try {
      if (host.startsWith('dead')) {
        await new Promise<void>((resolve) => this.hanging.push(resolve));
        return { kind: 'aborted' };
      }
      await new Promise((r) => setImmediate(r));
      return { kind: 'done', ok: true, responseCode: 200, error: null, durationMs: 1, attemptedAt: new Date() };
    } finally {
      this.inFlight.set(host, this.inFlight.get(host)! - 1);
    }
  }

  abortAll(): void {
    this.hanging.splice(0).forEach((resolve) => resolve());
  }
}

const settings: WebhookSettings = {
  allowInsecure: false,
  allowPrivate: false,
  retryScheduleMs: [1000],
  timeoutMs: 10_000,
  claimLeaseMs: 30_000,
  concurrency: 6,
  endpointConcurrency: 2,
  pollMs: 10,
  retentionDays: 30,
};

describe('DeliveryWorker (fakes)', () => {
  it('serves healthy endpoints in full while a dead one holds only its own slots; stop gives unsent tasks back', async () => {
    const store = new FakeTaskStore();
    const sender = new FakeSender();
    store.add('dead', 40);
    store.add('ok1', 100);
    store.add('ok2', 100);
    const worker = new DeliveryWorker({
      db: {} as Db,
      tasks: store as unknown as TaskStore,
      sender: sender as unknown as WebhookSender,
      settings,
      logger: testLogger(),
    });
    worker.start();
    await waitFor(() => store.completed.length === 200, { timeoutMs: 10_000, what: 'every healthy task recorded' });
    expect(store.completed.every((r) => r.task.endpointId !== 'dead' && r.status === 'succeeded')).toBe(true);
    expect(new Set(store.completed.map((r) => r.task.eventId)).size).toBe(200);
    expect(sender.maxInFlight.get('dead')).toBe(2);
    expect(sender.maxInFlight.get('ok1')).toBeLessThanOrEqual(2);
    expect(sender.maxTotal).toBeLessThanOrEqual(6);
    const deadClaimed = store.tasks.filter((t) => t.endpointId === 'dead' && t.claimed).length;
    expect(deadClaimed).toBe(4);

    await worker.stop();
    expect(store.released.map((t) => t.endpointId)).toEqual(['dead', 'dead', 'dead', 'dead']);
    expect(store.completed).toHaveLength(200);
  });
});
