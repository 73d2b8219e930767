import knex, { Knex } from 'knex';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import ClientPGLite from 'knex-pglite';
import { DatabaseError, isDomainError } from '@billstream/errors';

export type Db = Knex;
export type Trx = Knex.Transaction;
/** What a store method runs on: the pool, or the transaction it is part of (passed first). */
export type Conn = Db | Trx;
export type { Knex };

// int8 (counts, sequence numbers) as JS numbers; numeric stays a string, never a float.
pg.types.setTypeParser(20, (v: string) => Number(v));

export interface PgOptions {
  /** postgres:// connection string. */
  databaseUrl: string;
  /** Schema this service owns; it becomes the search path. */
  schema: string;
  poolMax?: number;
}

export interface DbOptions extends Omit<PgOptions, 'databaseUrl'> {
  /** postgres:// connection string; when absent, `pgliteDir` is used. */
  databaseUrl?: string;
  /** Directory of an embedded PGlite database (single connection). */
  pgliteDir?: string;
}

/** knex on Postgres (pg), with the service's schema as search path. */
export function createDb({ databaseUrl, schema, poolMax = 10 }: PgOptions): Db {
  return knex({
    client: 'pg',
    connection: { connectionString: databaseUrl, application_name: `billstream-${schema}` },
    searchPath: [schema, 'public'],
    pool: { min: 0, max: poolMax },
    acquireConnectionTimeout: 10_000,
  });
}

/**
 * Opens a database: Postgres when `databaseUrl` is given, else embedded PGlite in `pgliteDir`
 * (single connection). PGlite is made ready before knex sees it, because its first open runs
 * initdb inside WebAssembly, which can outlast knex's connection timeouts on a busy machine.
 */
export async function openDb(options: DbOptions): Promise<Db> {
  if (options.databaseUrl) return createDb({ ...options, databaseUrl: options.databaseUrl });
  if (!options.pgliteDir) throw new Error('openDb needs databaseUrl or pgliteDir');
  const pglite = await PGlite.create(options.pgliteDir);
  return knex({
    client: ClientPGLite,
    connection: { pglite },
    searchPath: [options.schema, 'public'],
  } as Knex.Config);
}

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

export function isPglite(db: Db): boolean {
  return db.client.config.client !== 'pg';
}
