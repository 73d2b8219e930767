import type { Db } from '@billstream/db';
import type { Logger } from '@billstream/logger';
import { Repeating, failpoint } from '@billstream/runtime';
import type { QuotaUpstreams } from './upstreams';

/** Committed holds looked at per round. */
const BATCH = 200;
/** How often committed holds are looked at (docs/api/reservations.md): a stored event is seen within about this. */
export const RESERVATION_SETTLE_INTERVAL_MS = 100;
/**
 * How long after its event is seen stored a quantity hold still counts: the entitlement check
 * counts every stored event within 2 s (docs/api/entitlements.md, "Freshness").
 */
export const CHECK_FRESHNESS_MS = 2000;

interface SettlingRow {
  id: string;
  tenant_id: string;
  environment_id: string;
  customer_id: string;
  wallet_id: string | null;
  currency: string | null;
  feature_id: string | null;
  event_seen_at: Date | null;
  event_id: string;
  event_name: string;
  external_customer_id: string;
  timestamp: string;
  /** The wallet's unbilled usage `as_of` of the currency; null: none computed yet. */
  as_of: Date | null;
  counts_usage: boolean | null;
}

/**
 * Ends the count of holds committed by a usage event once the event is counted (ADR 0070), so
 * what is available never jumps up in between: a hold of an entitlement once the aggregator
 * stored the event and the check's freshness bound passed; a hold of credits once the wallet's
 * real-time balance holds it (an unbilled usage computation `as_of` the moment the event was
 * seen stored, or later), or at once when the wallet does not count unbilled usage.
 * Reads outside transactions (no call to another service inside one, ADR 0055); each write is
 * one guarded statement, so replicas doing the same round write each row once.
 */
export interface UsageSettlementOptions {
  db: Db;
  upstreams: QuotaUpstreams;
  logger: Logger;
  clock: () => Date;
  intervalMs: number;
  /** How long after its event is seen stored an entitlement hold still counts (default CHECK_FRESHNESS_MS). */
  freshnessMs?: number;
}

export class UsageSettlement {
  private readonly db: Db;
  private readonly upstreams: QuotaUpstreams;
  private readonly clock: () => Date;
  private readonly freshnessMs: number;
  private readonly schedule: Repeating<number>;

  constructor(options: UsageSettlementOptions) {
    this.db = options.db;
    this.upstreams = options.upstreams;
    this.clock = options.clock;
    this.freshnessMs = options.freshnessMs ?? CHECK_FRESHNESS_MS;
    this.schedule = new Repeating({
      run: () => this.runOnce(),
      intervalMs: options.intervalMs,
      logger: options.logger,
      failure: 'reservation settlement round failed; will retry',
      done: (n) => {
        if (n > 0) options.logger.debug('committed holds settled', { settled: n });
      },
    });
  }

  /** One round: answers how many holds stopped counting. */
  async runOnce(): Promise<number> {
    const rows = await this.db
      .select<SettlingRow[]>(
        'r.id',
        'r.tenant_id',
        'r.environment_id',
        'r.customer_id',
        'r.wallet_id',
        'r.currency',
        'r.feature_id',
        'r.event_seen_at',
        this.db.raw("r.commit_event->>'event_id' AS event_id"),
        this.db.raw("r.commit_event->>'event_name' AS event_name"),
        this.db.raw("r.commit_event->>'external_customer_id' AS external_customer_id"),
        this.db.raw("r.commit_event->>'timestamp' AS timestamp"),
        'u.as_of',
        this.db.raw("(w.wallet_type = 'PRE_PAID' AND jsonb_exists_any(w.allowed_price_types, array['USAGE', 'ALL'])) AS counts_usage"),
      )
      .from('reservations as r')
      .leftJoin('wallets as w', 'w.id', 'r.wallet_id')
      .leftJoin('unbilled_usage as u', (j) =>
        j.on('u.tenant_id', 'r.tenant_id').andOn('u.environment_id', 'r.environment_id').andOn('u.customer_id', 'r.customer_id').andOn('u.currency', 'r.currency'),
      )
      .where({ 'r.status': 'committed' })
      .whereNotNull('r.commit_event')
      .whereNull('r.settled_at')
      .orderBy('r.updated_at')
      .limit(BATCH);
    let settled = 0;
    for (const r of rows) {
      const now = this.clock();
      if (!r.event_seen_at) {
        const scope = { tenantId: r.tenant_id, environmentId: r.environment_id };
        const stored = await this.upstreams.stored(scope, { eventId: r.event_id, eventName: r.event_name, externalCustomerId: r.external_customer_id, timestamp: r.timestamp }, `settle-${r.id}`);
        if (stored && (await this.db('reservations').where({ id: r.id }).whereNull('event_seen_at').update({ event_seen_at: now })) > 0) failpoint('reservations.settle.after-seen');
        continue;
      }
      const seenAt = new Date(r.event_seen_at).getTime();
      const counted = r.feature_id ? now.getTime() - seenAt >= this.freshnessMs : !r.counts_usage || (r.as_of !== null && new Date(r.as_of).getTime() >= seenAt);
      if (!counted) continue;
      settled += await this.db('reservations').where({ id: r.id }).whereNull('settled_at').update({ settled_at: now, updated_at: now });
    }
    return settled;
  }

  start(): void {
    this.schedule.start();
  }

  stop(): Promise<void> {
    return this.schedule.stop();
  }
}
