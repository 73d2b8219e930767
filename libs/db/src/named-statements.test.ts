import { isPostgresServerClient, StatementNames } from './named-statements';

const SELECT = 'select "id" from "wallets" where "id" = $1';

describe('StatementNames', () => {
  it('names a text from its second use, the same name every time after', () => {
    const names = new StatementNames();
    expect(names.nameOf(SELECT, 1)).toBeUndefined();
    const name = names.nameOf(SELECT, 1);
    expect(name).toMatch(/^bs_[A-Za-z0-9_-]{24}_0$/);
    expect(names.nameOf(SELECT, 1)).toBe(name);
    expect(names.size).toBe(1);
  });

  it('gives different texts different names, and the same text the same name in another process', () => {
    const a = new StatementNames({ minUses: 1 });
    const b = new StatementNames({ minUses: 1 });
    const other = 'select "id" from "wallets" where "customer_id" = $1';
    expect(a.nameOf(SELECT, 1)).not.toBe(a.nameOf(other, 1));
    expect(b.nameOf(SELECT, 1)).toBe(a.nameOf(SELECT, 1));
  });

  it('leaves unnamed what must not or need not be kept: no values, transaction control, SET, DDL, long texts, many values', () => {
    const names = new StatementNames({ minUses: 1, maxLength: 100, maxValues: 3 });
    expect(names.nameOf('insert into "t" ("a", "b") values ($1, $2), ($3, $4)', 4)).toBeUndefined();
    expect(names.nameOf('select 1', 0)).toBeUndefined();
    expect(names.nameOf('BEGIN;', 0)).toBeUndefined();
    expect(names.nameOf('set search_path to "wallet"', 1)).toBeUndefined();
    expect(names.nameOf('CREATE TABLE t (id text)', 1)).toBeUndefined();
    expect(names.nameOf(`select ${'1, '.repeat(60)}$1`, 1)).toBeUndefined();
    expect(names.nameOf('  WITH v AS (SELECT $1::int) SELECT * FROM v', 1)).toBeDefined();
    expect(names.nameOf('insert into "t" ("a") values ($1)', 1)).toBeDefined();
    expect(names.nameOf('UPDATE t SET a = $1', 1)).toBeDefined();
    expect(names.nameOf('delete from t where a = $1', 1)).toBeDefined();
    expect(names.size).toBe(4);
  });

  it('names at most maxNamed texts; the rest run unnamed as before', () => {
    const names = new StatementNames({ minUses: 1, maxNamed: 2 });
    expect(names.nameOf('select $1::int AS a', 1)).toBeDefined();
    expect(names.nameOf('select $1::int AS b', 1)).toBeDefined();
    expect(names.nameOf('select $1::int AS c', 1)).toBeUndefined();
    expect(names.nameOf('select $1::int AS a', 1)).toBeDefined();
  });

  it('forgets its counts when maxCounted texts wait for a second use', () => {
    const names = new StatementNames({ maxCounted: 2 });
    names.nameOf('select $1::int AS a', 1);
    names.nameOf('select $1::int AS b', 1);
    names.nameOf('select $1::int AS c', 1); // the counts of a and b are dropped
    expect(names.nameOf('select $1::int AS a', 1)).toBeUndefined();
    expect(names.nameOf('select $1::int AS c', 1)).toBeDefined();
  });

  it('renames a text at once: a name not used before', () => {
    const names = new StatementNames();
    names.nameOf(SELECT, 1);
    const first = names.nameOf(SELECT, 1)!;
    names.rename(SELECT);
    const second = names.nameOf(SELECT, 1);
    expect(second).toBeDefined();
    expect(second).not.toBe(first);
    names.rename('select "never" from "named" where a = $1'); // not named: nothing to do
    expect(names.nameOf(SELECT, 1)).toBe(second);
  });

  it('tells the server clients from the embedded one', () => {
    expect(isPostgresServerClient('pg')).toBe(true);
    expect(isPostgresServerClient(class PGLiteClient {})).toBe(false);
    expect(isPostgresServerClient(Object.assign(class Named {}, { postgresServer: true }))).toBe(true);
  });
});
