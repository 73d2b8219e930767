import type { Knex } from 'knex';
import { DatabaseError, isDomainError } from '@billstream/errors';
import { isPostgresServerClient } from './named-statements';

export type Db = Knex;
export type Trx = Knex.Transaction;
/** What a store method runs on: the pool, or the transaction it is part of (passed first). */
export type Conn = Db | Trx;
export type { Knex };
export { createDb, type PgOptions } from './postgres';
export { StatementNames, isPostgresServerClient } from './named-statements';
export { openServiceDatabases, EMBEDDED_DIR, type ServiceDatabases, type ServiceDatabasesOptions } from './service-databases';

export interface Migration {
  name: string;
  up(db: Knex): Promise<void>;
  down?(db: Knex): Promise<void>;
}

/** Runs a service's migrations in its own schema, with the migration table kept in that schema. */
export async function migrate(db: Db, schema: string, migrations: Migration[]): Promise<void> {
  await db.raw('CREATE SCHEMA IF NOT EXISTS ??', [schema]);
  await db.migrate.latest({
    schemaName: schema,
    tableName: 'knex_migrations',
    migrationSource: {
      getMigrations: async () => migrations,
      getMigrationName: (m: Migration) => m.name,
      getMigration: async (m: Migration) => ({
        up: (k: Knex) => m.up(k),
        down: (k: Knex) => (m.down ? m.down(k) : Promise.resolve()),
      }),
    },
  });
}

/** `select 1` with a time limit: the readiness probe of a service's database. */
export async function pingDb(db: Db, timeoutMs = 2000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      db.raw('select 1'),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), timeoutMs);
      }),
    ]);
    return true;
  } catch {
    return false;
  } finally {
    if (timer) clearTimeout(timer);
  }
}

/** Wraps a driver failure that is not a domain error into a DatabaseError (500 database_error). */
export function asDatabaseError(err: unknown): unknown {
  if (isDomainError(err)) return err;
  if (typeof err === 'object' && err !== null && 'code' in err) {
    return new DatabaseError('Database operation failed', { cause: err });
  }
  return err;
}

/** Rows of a raw query, the same on pg and PGlite. */
export function rowsOf<T>(result: unknown): T[] {
  const r = result as { rows?: T[] };
  return r.rows ?? [];
}

/**
 * Whether `db` is on the embedded database, whose one session the services of the process
 * take turns on: a transaction there must not wait for another service's database work.
 */
export function isEmbedded(db: Db): boolean {
  return !isPostgresServerClient(db.client.config.client);
}

/**
 * One page of a filtered list in creation order (created_at, id) and the list's total, the two
 * queries at once: `filtered` builds the query with its filters (it is called for each).
 */
export async function pageOf<R extends object, T>(
  filtered: () => Knex.QueryBuilder<R>,
  page: { limit: number; offset: number },
  map: (row: R) => T,
): Promise<{ items: T[]; total: number }> {
  const [rows, count] = await Promise.all([
    filtered().orderBy([{ column: 'created_at' }, { column: 'id' }]).limit(page.limit).offset(page.offset),
    filtered().count<Array<{ n: string }>>({ n: '*' }),
  ]);
  return { items: (rows as R[]).map(map), total: Number(count[0]!.n) };
}
export { listenChannel, notifyChannelMany, type ChannelListener, type ChannelListenerOptions } from './notices';
