import knex, { type Knex } from 'knex';
import pg from 'pg';
import { traceQueries } from './traced';

// int8 (counts, sequence numbers) as JS numbers; numeric stays a string, never a float.
pg.types.setTypeParser(20, (v: string) => Number(v));

export interface PgOptions {
  /** postgres:// connection string. */
  databaseUrl: string;
  /** Schema this service owns; it becomes the search path. */
  schema: string;
  poolMax?: number;
}

/** knex on Postgres (pg), with the service's schema as search path. */
export function createDb({ databaseUrl, schema, poolMax = 10 }: PgOptions): Knex {
  const db = knex({
    client: 'pg',
    connection: { connectionString: databaseUrl, application_name: `billstream-${schema}` },
    searchPath: [schema, 'public'],
    pool: { min: 0, max: poolMax },
    acquireConnectionTimeout: 10_000,
  });
  return traceQueries(db, schema);
}
