import knex, { type Knex } from 'knex';
import pg from 'pg';
import { namedStatementsClient, StatementNames } from './named-statements';
import { traceQueries } from './traced';
import { markTransactions } from './held';

// int8 (counts, sequence numbers) as JS numbers; numeric stays a string, never a float.
pg.types.setTypeParser(20, (v: string) => Number(v));

export interface PgOptions {
  /** postgres:// connection string. */
  databaseUrl: string;
  /** Schema this service owns; it becomes the search path. */
  schema: string;
  poolMax?: number;
  /**
   * Repeated statements as named (server-side prepared) statements (ADR 0052; default true).
   * Off for a pooler in transaction mode that does not keep them (PgBouncer before 1.21).
   */
  namedStatements?: boolean;
}

/** knex on Postgres (pg), with the service's schema as search path. */
export function createDb({ databaseUrl, schema, poolMax = 10, namedStatements = true }: PgOptions): Knex {
  const db = knex({
    client: namedStatements ? (namedStatementsClient(new StatementNames()) as unknown as Knex.Config['client']) : 'pg',
    connection: { connectionString: databaseUrl, application_name: `billstream-${schema}` },
    searchPath: [schema, 'public'],
    pool: { min: 0, max: poolMax },
    acquireConnectionTimeout: 10_000,
  });
  return markTransactions(traceQueries(db, schema), false);
}
