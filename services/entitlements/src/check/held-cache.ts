import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { TOPICS, type Bus, type ConsumedMessage, type ConsumingState, type Subscription } from '@billstream/bus';
import type { Scope } from '@billstream/contracts';
import type { Logger } from '@billstream/logger';
import type { HeldQuantity } from './access';

/** How long a held quantity is kept while the replica hears the wallet's reservation events (docs/api/entitlements.md, "Freshness"). */
export const HELD_TTL_HEARD_MS = 1000;
/** Keys kept at most; past it the cache starts again empty. */
const MAX_KEYS = 100_000;
/** Each replica's own group on wallet-events (a suffix per process): every replica hears every hold's event. */
export const HELD_NOTICES_GROUP_PREFIX = 'entitlements.check-held.';

interface Entry {
  held: Promise<string>;
  at: number;
}

/**
 * The wallet's held quantity of a customer's feature (ADR 0070), kept per replica so that the
 * check does not ask the wallet at every check: while this replica hears the wallet's
 * `reservation.*` events (`HeldNotices`), a value is kept `HELD_TTL_HEARD_MS` and dropped when an
 * event of a hold of the feature arrives (created, committed, released, expired); concurrent
 * misses of one key share one call. While it does not hear them it keeps nothing (one call a
 * check, as before). The wallet decides holds under its own lock, so the check's `held` being
 * a moment old never lets a hold overrun the limit. A drop that comes while a call is on its way
 * removes that call's answer too: the checks that came after the event ask again.
 */
export class CachedHeldQuantity implements HeldQuantity {
  private readonly entries = new Map<string, Entry>();
  private state?: () => ConsumingState;
  /** The consumer's session the kept values were heard in: a new one may have missed events. */
  private session = -1;

  constructor(
    private readonly wallet: HeldQuantity,
    private readonly now: () => number = () => Date.now(),
    private readonly ttlMs = HELD_TTL_HEARD_MS,
  ) {}

  /** Whether the wallet's reservation events are heard now (none: nothing is kept). */
  hear(state: (() => ConsumingState) | undefined): void {
    this.state = state;
    this.forgetAll();
  }

  held(scope: Scope, customerId: string, featureId: string, requestId: string): Promise<string> {
    const state = this.state?.();
    if (!state?.consuming) return this.wallet.held(scope, customerId, featureId, requestId);
    if (state.session !== this.session) {
      this.forgetAll();
      this.session = state.session;
    }
    const key = keyOf(scope, customerId, featureId);
    const now = this.now();
    const kept = this.entries.get(key);
    if (kept && now - kept.at < this.ttlMs) return kept.held;
    const held = this.wallet.held(scope, customerId, featureId, requestId);
    if (this.entries.size >= MAX_KEYS) this.forgetAll();
    const entry = { held, at: now };
    this.entries.set(key, entry);
    held.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    return held;
  }

  /** A hold of the customer's feature changed: the next check asks the wallet. */
  dropped(scope: Scope, customerId: string, featureId: string): void {
    const key = keyOf(scope, customerId, featureId);
    this.entries.delete(key);
  }

  forgetAll(): void {
    this.entries.clear();
  }
}

const keyOf = (scope: Scope, customerId: string, featureId: string) => `${scope.tenantId}|${scope.environmentId}|${customerId}|${featureId}`;

/**
 * Hears the wallet's `reservation.*` events (wallet-events, ADR 0068, 0070) on every replica, with
 * a group of its own that commits no offsets (it reads only what comes while it runs), and drops
 * the held quantity of the hold's customer and feature. A message it cannot read forgets all;
 * while the consumer is not consuming nothing is kept (`CachedHeldQuantity`).
 */
export class HeldNotices {
  private subscription?: Subscription;

  constructor(
    private readonly bus: Bus,
    private readonly cache: CachedHeldQuantity,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    await this.bus.ensureTopics([TOPICS.walletEvents]);
    const groupId = `${HELD_NOTICES_GROUP_PREFIX}${hostname()}.${process.pid}.${randomBytes(4).toString('hex')}`;
    const subscription = await this.bus.subscribe({
      groupId,
      topics: [TOPICS.walletEvents],
      fromBeginning: false,
      commitOffsets: false,
      joinPartitions: true,
      handler: async (messages) => this.heard(messages),
    });
    this.subscription = subscription;
    this.cache.hear(() => subscription.consuming());
  }

  async stop(): Promise<void> {
    this.cache.hear(undefined);
    await this.subscription?.stop();
    this.subscription = undefined;
  }

  private heard(messages: ConsumedMessage[]): void {
    for (const m of messages) {
      const hold = holdOf(m);
      if (hold === 'other') continue;
      if (!hold) {
        this.logger.warn('wallet-events message not understood; forgetting all held quantities', { partition: m.partition, offset: m.offset });
        this.cache.forgetAll();
        continue;
      }
      this.cache.dropped(hold.scope, hold.customerId, hold.featureId);
    }
  }
}

/** The customer and feature of a hold of an entitlement's event; 'other' for the wallet's other events (credit holds too). */
function holdOf(m: ConsumedMessage): { scope: Scope; customerId: string; featureId: string } | 'other' | undefined {
  let e: { type?: unknown; tenant_id?: unknown; environment_id?: unknown; payload?: { reservation?: { customer_id?: unknown; entitlement?: { feature_id?: unknown } | null } } } | null;
  try {
    e = JSON.parse(m.value) as typeof e;
  } catch {
    return undefined;
  }
  if (!e || typeof e.type !== 'string') return undefined;
  if (!e.type.startsWith('reservation.')) return 'other';
  const r = e.payload?.reservation;
  if (r && r.entitlement === null) return 'other';
  const featureId = r?.entitlement?.feature_id;
  if (typeof e.tenant_id !== 'string' || typeof e.environment_id !== 'string' || typeof r?.customer_id !== 'string' || typeof featureId !== 'string') return undefined;
  return { scope: { tenantId: e.tenant_id, environmentId: e.environment_id }, customerId: r.customer_id, featureId };
}
