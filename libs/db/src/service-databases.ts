import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { Knex } from 'knex';
import { createDb } from './postgres';
import { traceQueries } from './traced';
import { EmbeddedDatabase } from './embedded/database';

/** Where the embedded database lives inside a data directory. */
export const EMBEDDED_DIR = 'pglite';

export interface ServiceDatabases {
  /** The database of the service that owns `schema`, with that schema as search path. */
  forSchema(schema: string): Knex;
  /** Where the data is, for people: "PostgreSQL (DATABASE_URL)" or the embedded directory. */
  readonly description: string;
  close(): Promise<void>;
}

export interface ServiceDatabasesOptions {
  /** postgres:// connection string: one database, a schema and a pool per service. */
  databaseUrl?: string;
  /** Without databaseUrl: the data directory that holds the one embedded database. */
  dataDir?: string;
  /** Connections per service on Postgres (default 5). */
  poolMax?: number;
  /** Repeated statements as named statements on Postgres (default true, ADR 0052). */
  namedStatements?: boolean;
}

/** Directories of an earlier layout: one PGlite database per service. */
function perServiceDatabases(dataDir: string): string[] {
  if (!existsSync(dataDir)) return [];
  return readdirSync(dataDir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && e.name !== EMBEDDED_DIR && existsSync(path.join(dataDir, e.name, 'PG_VERSION')))
    .map((e) => e.name);
}

/**
 * The databases of the services of one process: schemas of DATABASE_URL with a pool each,
 * or schemas of one embedded PGlite database in `dataDir/pglite` that the services share
 * (docs/adr/0012-one-embedded-database.md).
 */
export async function openServiceDatabases(options: ServiceDatabasesOptions): Promise<ServiceDatabases> {
  const { databaseUrl } = options;
  if (databaseUrl) {
    const dbs = new Map<string, Knex>();
    return {
      description: 'PostgreSQL (DATABASE_URL)',
      forSchema(schema) {
        let db = dbs.get(schema);
        if (!db) {
          db = createDb({ databaseUrl, schema, poolMax: options.poolMax ?? 5, namedStatements: options.namedStatements });
          dbs.set(schema, db);
        }
        return db;
      },
      async close() {
        for (const db of dbs.values()) await db.destroy();
        dbs.clear();
      },
    };
  }
  if (!options.dataDir) throw new Error('openServiceDatabases needs databaseUrl or dataDir');
  const old = perServiceDatabases(options.dataDir);
  if (old.length > 0) {
    throw new Error(
      `${options.dataDir} holds one embedded database per service (${old.join(', ')}/), the layout of an earlier version. ` +
        `The services now share one database in ${path.join(options.dataDir, EMBEDDED_DIR)}: ` +
        'move those directories out of the data directory (or delete them to start afresh), or set DATA_DIR to a new directory.',
    );
  }
  const dir = path.join(options.dataDir, EMBEDDED_DIR);
  const embedded = await EmbeddedDatabase.open(dir);
  return {
    description: `embedded PGlite in ${dir}`,
    forSchema: (schema) => traceQueries(embedded.forSchema(schema), schema),
    close: () => embedded.close(),
  };
}
