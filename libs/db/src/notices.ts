import pg from 'pg';
import type { Knex } from 'knex';
import { isPostgresServerClient } from './named-statements';

/** What the listener logs with (a service's logger). */
interface WarnLogger {
  warn(message: string, meta?: Record<string, unknown>): void;
}

export interface ChannelListenerOptions {
  db: Knex;
  /** A Postgres channel name (an identifier: letters, digits, underscores). */
  channel: string;
  logger: WarnLogger;
  /** Each notification's payload. */
  onNotice(payload: string): void;
  /**
   * Called with true once LISTEN holds (again), and with false when the connection is lost:
   * notices sent while it was down are gone, so what they would have invalidated must be
   * dropped by the caller on both calls.
   */
  onLive(live: boolean): void;
  /** Longest pause between two attempts to connect again. Default 2 s. */
  maxRetryMs?: number;
}

export interface ChannelListener {
  stop(): Promise<void>;
}

/**
 * LISTEN on a channel over a connection of its own (not one of the pool's: it is held for as
 * long as the process runs), connecting again after a loss. Only on Postgres (pg): the
 * embedded database has one process and no other replica to hear from, so nothing is started
 * there and `onLive` is never called.
 */
export function listenChannel(options: ChannelListenerOptions): ChannelListener {
  const { db, channel, logger } = options;
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`not a channel name: ${channel}`);
  const config = db.client.config as { client?: unknown; connection?: pg.ClientConfig };
  if (!isPostgresServerClient(config.client) || !config.connection) return { stop: async () => undefined };
  let stopped = false;
  let client: pg.Client | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  let attempt = 0;

  const connect = async () => {
    if (stopped) return;
    const c = new pg.Client({ ...config.connection, application_name: `billstream-listen-${channel}` });
    let lost = false;
    const onLost = (err?: unknown) => {
      if (lost) return;
      lost = true;
      client = undefined;
      c.removeAllListeners('notification');
      c.end().catch(() => undefined);
      if (stopped) return;
      logger.warn('notice channel lost; listening again', { channel, err });
      options.onLive(false);
      schedule();
    };
    c.on('error', onLost);
    c.on('end', () => onLost());
    c.on('notification', (n) => {
      if (n.channel === channel) options.onNotice(n.payload ?? '');
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${channel}`);
    } catch (err) {
      onLost(err);
      return;
    }
    if (stopped || lost) {
      await c.end().catch(() => undefined);
      return;
    }
    // A listener never keeps the process alive by itself.
    (c as unknown as { connection?: { stream?: { unref?: () => void } } }).connection?.stream?.unref?.();
    attempt = 0;
    client = c;
    options.onLive(true);
  };
  const schedule = () => {
    attempt += 1;
    retryTimer = setTimeout(() => void connect(), Math.min(options.maxRetryMs ?? 2000, 100 * 2 ** attempt));
    retryTimer.unref?.();
  };
  void connect();
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(retryTimer);
      const c = client;
      client = undefined;
      await c?.end().catch(() => undefined);
    },
  };
}

/** Sends notices on `channel` in one statement, in the order given (delivered to every listener when the statement's transaction commits). */
export async function notifyChannelMany(conn: Knex, channel: string, payloads: string[]): Promise<void> {
  if (payloads.length === 0) return;
  await conn.raw('SELECT pg_notify(?, p) FROM unnest(?::text[]) WITH ORDINALITY AS x (p, n) ORDER BY n', [channel, payloads]);
}
