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

export interface TestDatabaseOptions {
  /**
   * Start from the run's template: every service's migrations already applied (made once per
   * jest run by libs/testing/jest/global-setup.js from the build output). A whole-app stack then
   * skips about 2 s of migrations on its first start; the services' own migrate() still runs and
   * applies whatever the template lacks. Without a template (no build output) the database is empty.
   */
  migrated?: boolean;
}

/** The template database global-setup made for this run, if any. */
function templateName(): string | undefined {
  const name = process.env.BILLSTREAM_TEST_TEMPLATE_DB;
  return name && /^[a-z0-9_]+$/.test(name) ? name : undefined;
}

/** A new database on the local Postgres, named after this test run: empty, or migrated from the run's template. */
export async function createTestDatabase(options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const runId = process.env.TEST_RUN_ID ?? 'manual';
  const name = `bst_${runId}_${randomBytes(5).toString('hex')}`.toLowerCase();
  const template = options.migrated ? templateName() : undefined;
  const admin = new Client({ connectionString: adminUrl() });
  await admin.connect();
  try {
    await admin.query(template ? `CREATE DATABASE "${name}" TEMPLATE "${template}"` : `CREATE DATABASE "${name}"`);
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
