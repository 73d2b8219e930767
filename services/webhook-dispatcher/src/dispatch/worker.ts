import type { Db } from '@billstream/db';
import { newId, newUlid } from '@billstream/ids';
import type { Logger } from '@billstream/logger';
import { extractContext, inSpan, markFailed, recordWebhookAttempt, SpanKind } from '@billstream/observability';
import type { WebhookSettings } from '../config';
import { nextAttemptAt } from './retry';
import type { AttemptOutcome, WebhookSender } from './sender';
import type { ClaimedTask, TaskResult, TaskStore } from './task-store';

export interface DeliveryWorkerOptions {
  db: Db;
  tasks: TaskStore;
  sender: WebhookSender;
  settings: WebhookSettings;
  logger: Logger;
}

/** Outcomes are recorded in batches of at most this many, or after this long. */
const FLUSH_BATCH = 200;
const FLUSH_MS = 20;

/** The task's next state after an attempt, and the attempt's delivery record. */
export function resultOf(
  task: ClaimedTask,
  outcome: Extract<AttemptOutcome, { kind: 'done' }>,
  scheduleMs: number[],
  now: Date,
): TaskResult {
  const attempt = task.attempts + 1;
  const retryAt = outcome.ok ? null : nextAttemptAt(attempt, scheduleMs, now);
  return {
    task,
    status: outcome.ok ? 'succeeded' : retryAt ? 'pending' : 'failed',
    nextAttemptAt: retryAt,
    delivery: {
      id: newId('webhookDelivery'),
      endpointId: task.endpointId,
      eventId: task.eventId,
      eventName: task.eventName,
      attempt,
      status: outcome.ok ? 'succeeded' : 'failed',
      responseCode: outcome.responseCode,
      error: outcome.error,
      durationMs: outcome.durationMs,
      attemptedAt: outcome.attemptedAt,
      retryAt,
    },
  };
}

/** Tasks claimed ahead of free slots, as a multiple of the concurrency: claims stay off the critical path. */
export const PREFETCH = 2;

function bump(map: Map<string, number>, key: string, by: number): void {
  const value = (map.get(key) ?? 0) + by;
  if (value === 0) map.delete(key);
  else map.set(key, value);
}

/**
 * Sends due tasks. At most `concurrency` attempts are in flight, at most
 * `endpointConcurrency` per endpoint, so a slow or dead endpoint holds only its own slots
 * and never delays the others. Claims fetch up to PREFETCH times that ahead, per endpoint,
 * into local queues, so a slot that frees up is refilled without waiting for the database.
 * Outcomes are recorded in batches.
 */
export class DeliveryWorker {
  private running = false;
  private loop?: Promise<void>;
  private wake?: () => void;
  private nudged = false;
  private freedSinceClaim = 0;
  /** Claimed and not finished (queued or sending), per endpoint and in total. */
  private readonly held = new Map<string, number>();
  private heldTotal = 0;
  private readonly sending = new Map<string, number>();
  private sendingTotal = 0;
  private readonly queues = new Map<string, ClaimedTask[]>();
  private readonly sends = new Set<Promise<void>>();
  private readonly unsent: ClaimedTask[] = [];
  private results: TaskResult[] = [];
  private flushTimer?: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();
  private readonly wakeAfterFreed: number;

  constructor(private readonly options: DeliveryWorkerOptions) {
    this.wakeAfterFreed = Math.max(1, Math.floor(options.settings.endpointConcurrency / 2));
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** New tasks were enqueued: look for due work now. */
  nudge(): void {
    this.nudged = true;
    this.wake?.();
  }

  /**
   * Stops claiming, cuts attempts in flight short, records what finished, and gives the
   * tasks that were not attempted back at once.
   */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.options.sender.abortAll();
    this.wake?.();
    await this.loop;
    for (const queue of this.queues.values()) this.unsent.push(...queue.splice(0));
    await Promise.allSettled([...this.sends]);
    for (let round = 0; round < 3 && this.results.length > 0; round += 1) await this.flush();
    if (this.unsent.length > 0) {
      await this.options.tasks.release(this.options.db, this.unsent.splice(0)).catch((err) => {
        this.options.logger.warn('could not release claimed webhook tasks; they come back when their lease ends', { err });
      });
    }
  }

  private async run(): Promise<void> {
    const { settings, logger } = this.options;
    let failures = 0;
    while (this.running) {
      this.nudged = false;
      // Counted from the start of the claim: slots freed while it runs count toward the next one.
      this.freedSinceClaim = 0;
      let claimed = 0;
      const free = PREFETCH * settings.concurrency - this.heldTotal;
      if (free > 0) {
        try {
          const tasks = await this.options.tasks.claim(this.options.db, {
            limit: free,
            endpointCap: PREFETCH * settings.endpointConcurrency,
            inFlight: Object.fromEntries(this.held),
            leaseMs: settings.claimLeaseMs,
            claimId: newUlid(),
          });
          failures = 0;
          claimed = tasks.length;
          for (const task of tasks) this.hold(task);
          this.pump();
        } catch (err) {
          failures += 1;
          logger.warn('claiming webhook tasks failed; will retry', { err });
        }
      }
      if (!this.running) break;
      // Claim again at once after a full claim, news, or enough freed slots; else wait for them.
      const ready = claimed >= this.wakeAfterFreed || this.nudged || this.freedSinceClaim >= this.wakeAfterFreed;
      if (ready && failures === 0) continue;
      await this.sleep(failures > 0 ? Math.min(5000, 100 * 2 ** failures) : settings.pollMs);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = undefined;
        done();
      };
    });
  }

  private hold(task: ClaimedTask): void {
    bump(this.held, task.endpointId, 1);
    this.heldTotal += 1;
    const queue = this.queues.get(task.endpointId) ?? [];
    queue.push(task);
    this.queues.set(task.endpointId, queue);
  }

  /** Starts queued tasks while slots are free, one endpoint after another. */
  private pump(): void {
    const { concurrency, endpointConcurrency } = this.options.settings;
    let progress = true;
    while (progress && this.running && this.sendingTotal < concurrency) {
      progress = false;
      for (const [endpointId, queue] of this.queues) {
        if (this.sendingTotal >= concurrency) break;
        if ((this.sending.get(endpointId) ?? 0) >= endpointConcurrency) continue;
        const task = queue.shift();
        if (queue.length === 0) this.queues.delete(endpointId);
        if (!task) continue;
        this.launch(task);
        progress = true;
      }
    }
  }

  private launch(task: ClaimedTask): void {
    bump(this.sending, task.endpointId, 1);
    this.sendingTotal += 1;
    // A client span in the trace of the change that caused the event (ADR 0020); none without tracing.
    const send = inSpan(
      `webhook deliver ${task.eventName}`,
      { kind: SpanKind.CLIENT, parent: task.traceParent ? extractContext({ traceparent: task.traceParent }) : undefined, attributes: { 'billstream.webhook.attempt': task.attempts + 1 } },
      async (span) => {
        const outcome = await this.options.sender.send({ url: task.url, secret: task.secret, envelopeId: task.eventId, body: task.body });
        if (outcome.kind === 'done') {
          span?.setAttribute('http.response.status_code', outcome.responseCode ?? 0);
          if (!outcome.ok) markFailed(span);
        }
        return outcome;
      },
    )
      .then((outcome) => {
        if (outcome.kind === 'aborted') this.unsent.push(task);
        else {
          const result = resultOf(task, outcome, this.options.settings.retryScheduleMs, new Date());
          recordWebhookAttempt(outcome.ok, outcome.durationMs / 1000, result.status === 'pending' ? 'retry' : result.status === 'failed' ? 'exhausted' : 'done');
          this.record(result);
        }
      })
      .catch((err) => {
        this.options.logger.error('webhook attempt failed unexpectedly; the task comes back when its lease ends', { err });
      })
      .finally(() => {
        this.sends.delete(send);
        bump(this.sending, task.endpointId, -1);
        this.sendingTotal -= 1;
        bump(this.held, task.endpointId, -1);
        this.heldTotal -= 1;
        this.pump();
        this.freedSinceClaim += 1;
        if (this.freedSinceClaim >= this.wakeAfterFreed || this.sendingTotal === 0) this.wake?.();
      });
    this.sends.add(send);
  }

  private record(result: TaskResult): void {
    this.results.push(result);
    if (this.results.length >= FLUSH_BATCH) void this.flush();
    else if (!this.flushTimer) this.flushTimer = setTimeout(() => void this.flush(), FLUSH_MS);
  }

  /** Writes the buffered results; a failed write keeps them for the next flush. */
  private flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (this.flushTimer) clearTimeout(this.flushTimer);
      this.flushTimer = undefined;
      const batch = this.results.splice(0, FLUSH_BATCH);
      if (batch.length === 0) return;
      try {
        await this.options.tasks.complete(this.options.db, batch);
      } catch (err) {
        this.options.logger.warn('recording webhook attempts failed; will retry', { err, count: batch.length });
        this.results.unshift(...batch);
        if (this.running && !this.flushTimer) this.flushTimer = setTimeout(() => void this.flush(), 1000);
        return;
      }
      if (this.results.length > 0) void this.flush();
    });
    return this.flushing;
  }
}
