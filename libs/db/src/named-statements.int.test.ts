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

  it('sends a whereIn list as one array value: one text and one name whatever its length, the same rows as IN (ADR 0054)', async () => {
    const db = open(true, 1);
    await db('things').insert([
      { id: 20, label: 'a"b,c}\\' },
      { id: 21, label: 'NULL' },
      { id: 22, label: 'x' },
    ]);
    const ids = (n: number) => Array.from({ length: n }, (_, i) => 20 + i);
    // Lists of 3, 100 and 150 ids (past the 64 values a named text may hold): one text, one statement kept.
    for (const n of [3, 100, 150, 3]) {
      expect(await db('things').whereIn('id', ids(n)).orderBy('id').pluck('id')).toEqual([20, 21, 22]);
    }
    expect(await preparedWith(db, '"id" = ANY(')).toBe(1);
    // Texts with a quote, a comma, a brace, a backslash, and the word NULL, each match themselves only.
    expect(await db('things').whereIn('label', ['a"b,c}\\', 'NULL']).orderBy('id').pluck('id')).toEqual([20, 21]);
    expect(await db('things').where('id', '>=', 20).whereNotIn('label', ['x', 'y']).orderBy('id').pluck('id')).toEqual([20, 21]);
    expect(db('things').whereIn('id', [1, 2]).whereNotIn('label', ['x']).toSQL().sql).toBe('select * from "things" where "id" = ANY(?) and "label" <> ALL(?)');
    // Anything else stays a list: nulls, dates, several columns, a subquery, an empty list.
    expect(db('things').whereIn('id', [1, null]).toSQL().sql).toBe('select * from "things" where "id" in (?, ?)');
    expect(db('things').whereIn(['id', 'label'], [[1, 'one']]).toSQL().sql).toBe('select * from "things" where ("id", "label") in ((?, ?))');
    expect(db('things').whereIn('id', db('things').select('id')).toSQL().sql).toBe('select * from "things" where "id" in (select "id" from "things")');
    expect(await db('things').whereIn('id', []).pluck('id')).toEqual([]);
    await db('things').whereIn('id', ids(3)).delete();
    expect(await db('things').where('id', '>=', 20).pluck('id')).toEqual([]);
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
