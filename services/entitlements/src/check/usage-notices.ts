import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { TOPICS, type Bus, type ConsumedMessage, type Subscription } from '@billstream/bus';
import { USAGE_RESET_KEY } from '@billstream/contracts';
import type { Logger } from '@billstream/logger';
import type { AccessCache } from './access-cache';

/** Each replica's own group on usage-recorded (a suffix per process): every replica hears every notice. */
export const USAGE_NOTICES_GROUP_PREFIX = 'entitlements.check-usage.';
/** A notice heard this long after its usage was stored says the notices' path lags. */
export const USAGE_NOTICE_LATE_MS = 1000;

export interface UsageNoticesDeps {
  bus: Bus;
  cache: AccessCache;
  logger: Logger;
  /** Milliseconds now (default `Date.now`; a notice's lateness is measured with it). */
  now?: () => number;
}

/**
 * Drops the entitlement check's cached usage of a customer when the aggregator announces its
 * stored usage (`usage-recorded`, ADR 0026), so that usage can be kept `USAGE_TTL_NOTIFIED_MS`
 * instead of 1 s. Every entitlements replica reads every notice with a group of its own that commits
 * no offsets (it reads only what comes while it runs; Kafka drops the group once it left).
 * A reset, a message it cannot read or a notice that came late forgets all usage; while the
 * consumer is not consuming (or after a late notice, for a while) usage is kept 1 s.
 */
export class UsageNotices {
  private subscription?: Subscription;
  private readonly bus: Bus;
  private readonly cache: AccessCache;
  private readonly logger: Logger;
  private readonly now: () => number;

  constructor(deps: UsageNoticesDeps) {
    ({ bus: this.bus, cache: this.cache, logger: this.logger } = deps);
    this.now = deps.now ?? (() => Date.now());
  }

  private starting?: Promise<void>;

  /**
   * Starts hearing notices once, in the background: called by the first check that reads usage
   * (a replica that serves no check keeps no usage and needs no consumer). Until the consumer
   * consumes, usage is kept 1 s.
   */
  ensureStarted(): void {
    this.starting ??= this.start().catch((err: unknown) => {
      this.logger.warn('usage-recorded notices not heard; the check keeps usage 1 s', { err });
    });
  }

  async start(): Promise<void> {
    const groupId = `${USAGE_NOTICES_GROUP_PREFIX}${hostname()}.${process.pid}.${randomBytes(4).toString('hex')}`;
    const subscription = await this.bus.subscribe({
      groupId,
      topics: [TOPICS.usageRecorded],
      fromBeginning: false,
      commitOffsets: false,
      // One fetch's notices in one call: the usage they make old is read again in one batch (ADR 0028).
      joinPartitions: true,
      handler: async (messages) => this.heard(messages),
    });
    this.subscription = subscription;
    this.cache.hearUsage(() => subscription.consuming());
  }

  async stop(): Promise<void> {
    await this.starting;
    this.cache.hearUsage(undefined);
    await this.subscription?.stop();
    this.subscription = undefined;
  }

  /** Applies a batch of notices (exported for tests through the bus). */
  private heard(messages: ConsumedMessage[]): void {
    let late = 0;
    const now = this.now();
    for (const m of messages) {
      const notice = readNotice(m);
      if (notice === 'reset') {
        this.cache.forgetUsage();
        continue;
      }
      if (!notice) {
        this.logger.warn('usage-recorded message not understood; forgetting all cached usage', { partition: m.partition, offset: m.offset });
        this.cache.forgetUsage();
        continue;
      }
      this.cache.usageRecorded({ tenantId: notice.tenant_id, environmentId: notice.environment_id }, notice.external_customer_id);
      const storedAt = Date.parse(notice.stored_at);
      if (!(now - storedAt <= USAGE_NOTICE_LATE_MS)) late = Math.max(late, Number.isFinite(storedAt) ? now - storedAt : Infinity);
    }
    if (late > 0) {
      this.logger.warn('usage-recorded notices came late; the check keeps usage 1 s for a while', { late_ms: late });
      this.cache.forgetUsage(true);
    }
  }
}

interface Notice {
  tenant_id: string;
  environment_id: string;
  external_customer_id: string;
  stored_at: string;
}

const isText = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

function readNotice(m: ConsumedMessage): Notice | 'reset' | undefined {
  if (m.key === USAGE_RESET_KEY) return 'reset';
  let v: Partial<Notice> | null;
  try {
    v = JSON.parse(m.value) as Partial<Notice> | null;
  } catch {
    return undefined;
  }
  if (!v || !isText(v.tenant_id) || !isText(v.environment_id) || !isText(v.external_customer_id) || !isText(v.stored_at)) return undefined;
  return v as Notice;
}
