import type { Scope } from '@billstream/contracts';
import { listenChannel, notifyChannelMany, type ChannelListener, type Db } from '@billstream/db';
import type { Logger } from '@billstream/logger';
import type { AccessCache } from './access-cache';

/** The Postgres channel of the check's projection changes (one per database: each stack has its own). */
export const ACCESS_CHANNEL = 'entitlements_access';

interface Notice {
  t: string;
  e: string;
  /** The customer whose subscriptions changed; absent: a feature or entitlement of the scope. */
  c?: string;
}

/**
 * Tells every entitlements replica of a change of features, entitlements or a customer's
 * subscriptions made on one of them, over Postgres LISTEN/NOTIFY (ADR 0025), so that the
 * check's cache (`AccessCache`) can keep grants for `GRANTS_TTL_NOTIFIED_MS` instead of 1 s.
 * While the channel is down the cache is back to 1 s and forgets what it held.
 */
export class AccessNotices {
  private listener?: ChannelListener;

  constructor(
    private readonly db: Db,
    private readonly cache: AccessCache,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.cache.connect((scope, customerId) => this.announce(scope, customerId));
    this.listener = listenChannel({
      db: this.db,
      channel: ACCESS_CHANNEL,
      logger: this.logger,
      onLive: (live) => this.cache.setNotified(live),
      onNotice: (payload) => this.heard(payload),
    });
  }

  async stop(): Promise<void> {
    this.cache.setNotified(false);
    await this.listener?.stop();
  }

  /**
   * After a commit: the notice reaches the other replicas (and this one, harmlessly). The
   * notices of one turn of the event loop go in one statement, each once (a period job's chunk
   * announces hundreds of customers at once).
   */
  private announce(scope: Scope, customerId?: string): void {
    const notice: Notice = { t: scope.tenantId, e: scope.environmentId, ...(customerId === undefined ? {} : { c: customerId }) };
    this.pending.add(JSON.stringify(notice));
    if (this.pending.size === 1) setImmediate(() => this.flush());
  }

  private readonly pending = new Set<string>();

  private flush(): void {
    const payloads = [...this.pending];
    this.pending.clear();
    notifyChannelMany(this.db, ACCESS_CHANNEL, payloads).catch((err: unknown) => {
      // Unsent: the others could keep the old grants up to GRANTS_TTL_NOTIFIED_MS. Forgetting
      // here does not help them; say it loudly.
      this.logger.error('access change notices not sent; other replicas see them within their cache lifetime', { err, notices: payloads.length, first: payloads[0] });
    });
  }

  private heard(payload: string): void {
    let notice: Notice;
    try {
      notice = JSON.parse(payload) as Notice;
    } catch {
      this.cache.clear();
      return;
    }
    if (typeof notice?.t !== 'string' || typeof notice.e !== 'string') {
      this.cache.clear();
      return;
    }
    this.cache.heard({ tenantId: notice.t, environmentId: notice.e }, typeof notice.c === 'string' ? notice.c : undefined);
  }
}
