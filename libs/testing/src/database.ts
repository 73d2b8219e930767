import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { createDb, migrate, type Db, type Migration } from '@billstream/db';

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

function adminUrl(): string {
  return process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
}

/** A new, empty database on the local Postgres, named after this test run. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const runId = process.env.TEST_RUN_ID ?? 'manual';
  const name = `bst_${runId}_${randomBytes(5).toString('hex')}`.toLowerCase();
  const admin = new Client({ connectionString: adminUrl() });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl());
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      const c = new Client({ connectionString: adminUrl() });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

/** A knex handle on a test database with a service's migrations applied. */
export async function migratedDb(url: string, schema: string, migrations: Migration[], poolMax = 10): Promise<Db> {
  const db = createDb({ databaseUrl: url, schema, poolMax });
  await migrate(db, schema, migrations);
  return db;
}
