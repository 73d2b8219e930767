import { z } from 'zod';
import { env, loadConfig } from '@billstream/config';

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION = /^(\d+)(ms|s|m|h|d)$/;

export const DEFAULT_RETRY_SCHEDULE = '5s,5m,30m,2h,5h,10h,10h';

/** `5s,5m,30m,2h` as milliseconds; `none` means no retry at all. */
export const retrySchedule = z
  .string()
  .transform((value, ctx) => {
    if (value.trim() === 'none') return [];
    const parts = value.split(',').map((p) => p.trim());
    const delays: number[] = [];
    for (const part of parts) {
      const m = DURATION.exec(part);
      if (!m || Number(m[1]) === 0) {
        ctx.addIssue({ code: 'custom', message: `"${part}" is not a duration like 500ms, 5s, 5m, 2h or 1d (or the word none)` });
        return z.NEVER;
      }
      delays.push(Number(m[1]) * UNIT_MS[m[2]]);
    }
    return delays;
  });

/** Variables of the webhook dispatcher beyond the common ones. */
export const webhookEnv = {
  WEBHOOK_ALLOW_INSECURE: env.bool(false),
  WEBHOOK_ALLOW_PRIVATE: env.bool(false),
  WEBHOOK_RETRY_SCHEDULE: retrySchedule.prefault(DEFAULT_RETRY_SCHEDULE),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  WEBHOOK_CLAIM_LEASE_MS: z.coerce.number().int().min(1000).default(30_000),
  WEBHOOK_CONCURRENCY: env.int(64, 1),
  WEBHOOK_ENDPOINT_CONCURRENCY: env.int(16, 1),
  WEBHOOK_POLL_MS: env.int(500, 10),
  WEBHOOK_RETENTION_DAYS: env.int(30, 1),
};

export type WebhookEnv = z.output<z.ZodObject<typeof webhookEnv>>;

export interface WebhookSettings {
  /** http:// allowed, but only to loopback hosts. */
  allowInsecure: boolean;
  /** Private, loopback and link-local addresses allowed. */
  allowPrivate: boolean;
  /** Delay before retry n (n = 1, 2, ...); its length is the number of retries. */
  retryScheduleMs: number[];
  /** An attempt that has no 2xx status within this time has failed. */
  timeoutMs: number;
  /**
   * A claimed task not recorded within this time is claimed again (crashed worker); at least
   * twice the timeout plus 5 s, since a claimed task may wait for one attempt before its own.
   */
  claimLeaseMs: number;
  /** Attempts in flight per dispatcher, and per endpoint. */
  concurrency: number;
  endpointConcurrency: number;
  /** How often an idle worker looks for due attempts (a new event wakes it at once). */
  pollMs: number;
  /** Delivery records, finished tasks and their envelopes are deleted after this many days. */
  retentionDays: number;
}

export function webhookSettings(e: WebhookEnv): WebhookSettings {
  return {
    allowInsecure: e.WEBHOOK_ALLOW_INSECURE,
    allowPrivate: e.WEBHOOK_ALLOW_PRIVATE,
    retryScheduleMs: e.WEBHOOK_RETRY_SCHEDULE,
    timeoutMs: e.WEBHOOK_TIMEOUT_MS,
    claimLeaseMs: Math.max(e.WEBHOOK_CLAIM_LEASE_MS, 2 * e.WEBHOOK_TIMEOUT_MS + 5000),
    concurrency: e.WEBHOOK_CONCURRENCY,
    endpointConcurrency: Math.min(e.WEBHOOK_ENDPOINT_CONCURRENCY, e.WEBHOOK_CONCURRENCY),
    pollMs: e.WEBHOOK_POLL_MS,
    retentionDays: e.WEBHOOK_RETENTION_DAYS,
  };
}

/** Parses the webhook variables of an environment (a bad value throws, naming the variable). */
export function webhookSettingsFromEnv(source: NodeJS.ProcessEnv): WebhookSettings {
  return webhookSettings(loadConfig(z.object(webhookEnv), source));
}
