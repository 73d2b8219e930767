import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { createDb, isEmbedded, type Db } from './index';

// Real Postgres (DATABASE_URL, else the local one): named statements as knex runs them.
const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const dbName = `bst_${process.env.TEST_RUN_ID ?? 'manual'}_named_${randomBytes(4).toString('hex')}`.toLowerCase();

async function admin(sql: string): Promise<void> {
  const c = new Client({ connectionString: adminUrl });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

function urlOf(name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Statements prepared on the connection of `conn` whose text contains `marker`. */
async function preparedWith(conn: Db, marker: string): Promise<number> {
  const r = await conn.raw('SELECT count(*)::int AS n FROM pg_prepared_statements WHERE strpos(statement, ?) > 0', [marker]);
  return r.rows[0].n;
}

describe('named statements on Postgres (ADR 0052)', () => {
  const dbs: Db[] = [];
  const open = (namedStatements?: boolean, poolMax = 2): Db => {
    const db = createDb({ databaseUrl: urlOf(dbName), schema: 'named_test', poolMax, namedStatements });
    dbs.push(db);
    return db;
  };

  beforeAll(async () => {
    await admin(`CREATE DATABASE "${dbName}"`);
    const db = open(false, 1);
    await db.raw('CREATE SCHEMA named_test');
    await db.raw('CREATE TABLE named_test.things (id int PRIMARY KEY, label text NOT NULL)');
    await db.raw("INSERT INTO named_test.things VALUES (1, 'one'), (2, 'two')");
  });

  afterAll(async () => {
    for (const db of dbs) await db.destroy();
    await admin(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
  });

  it('runs a repeated statement under a name, parsed once per connection, with the right answers', async () => {
    const db = open();
    expect(isEmbedded(db)).toBe(false);
    await db.transaction(async (trx) => {
      for (let i = 0; i < 8; i += 1) {
        const r = await trx.raw('SELECT ?::int + 40 AS n_marker_a', [i]);
        expect(r.rows[0].n_marker_a).toBe(i + 40);
      }
      const rows = await trx('things').where('label', 'two').select('id');
      expect(rows).toEqual([{ id: 2 }]);
      expect(await preparedWith(trx, 'n_marker_a')).toBe(1);
    });
  });

  it('keeps nothing prepared when turned off (DATABASE_NAMED_STATEMENTS=false)', async () => {
    const db = open(false);
    await db.transaction(async (trx) => {
      for (let i = 0; i < 8; i += 1) await trx.raw('SELECT ?::int + 41 AS n_marker_b', [i]);
      expect(await preparedWith(trx, 'n_marker_b')).toBe(0);
    });
  });

  it('keeps a named statement usable after one of its executions failed', async () => {
    const db = open(true, 1);
    const insert = (id: number) => db('things').insert({ id, label: `t${id}` });
    await insert(10);
    await insert(11); // named from here
    await expect(insert(11)).rejects.toMatchObject({ code: '23505' });
    await insert(12);
    expect((await db('things').whereIn('id', [10, 11, 12]).count<{ count: string }[]>('* AS count'))[0].count).toBe(3);
    await db('things').whereIn('id', [10, 11, 12]).delete();
  });

  it('renames a statement whose kept plan a schema change made stale: at once outside a transaction, on the retry inside one', async () => {
    const db = open(true, 1);
    const byId = (conn: Db, id: number) => conn('things').where({ id }).select('*');
    for (let i = 0; i < 6; i += 1) expect(await byId(db, 1)).toEqual([{ id: 1, label: 'one' }]);
    await db.raw('ALTER TABLE things ADD COLUMN note text');
    // Outside a transaction: the one statement that meets the stale plan runs again under a new name.
    expect(await byId(db, 1)).toEqual([{ id: 1, label: 'one', note: null }]);

    for (let i = 0; i < 6; i += 1) await byId(db, 2);
    await db.raw('ALTER TABLE things ADD COLUMN score int');
    // Inside a transaction the failed statement has aborted it; the caller's retry succeeds.
    await expect(db.transaction((trx) => byId(trx, 2))).rejects.toMatchObject({ code: '0A000' });
    expect(await db.transaction((trx) => byId(trx, 2))).toEqual([{ id: 2, label: 'two', note: null, score: null }]);
  });
});
