import { createHash } from 'node:crypto';

/** What makes a statement text a candidate for a name (a server-side prepared statement). */
export interface StatementNamesOptions {
  /** Uses of a text before it is named: a statement run once is not worth a plan kept. */
  minUses?: number;
  /** Named texts per process at most; past it, new texts run unnamed as before. */
  maxNamed?: number;
  /** Texts counted but not yet named at most (the counts are forgotten when it fills). */
  maxCounted?: number;
  /** Longer texts are not named (memory kept on every connection). */
  maxLength?: number;
  /** Texts with more values are not named: a bulk insert's text grows with its rows, so each batch size would be a statement of its own. */
  maxValues?: number;
}

// Only one plain DML or query statement: with values, pg already sends these through the
// extended protocol, where a text can hold one statement; transaction control, SET, DDL and
// anything sent without values stay as they are.
const NAMEABLE = /^\s*(select|insert|update|delete|with)\b/i;

/**
 * Names for repeated statement texts (ADR 0052). pg sends an unnamed statement per query, so
 * Postgres parses and plans every execution anew; on this code's statements the planning
 * costs more than the execution (0.5-0.8 ms against 0.1 ms for a wallet's debit statements).
 * A named statement is parsed once per connection, and after five executions Postgres may keep
 * a generic plan for it (`plan_cache_mode` auto). A text is named from its `minUses`-th use;
 * the name is a hash of the text, so every connection of the process uses the same name for it.
 */
export class StatementNames {
  private readonly minUses: number;
  private readonly maxNamed: number;
  private readonly maxCounted: number;
  private readonly maxLength: number;
  private readonly maxValues: number;
  private readonly named = new Map<string, string>();
  private counted = new Map<string, number>();
  /** Renames so far: part of every new name, so a renamed text gets a name not used before. */
  private renamed = 0;

  constructor(options: StatementNamesOptions = {}) {
    this.minUses = options.minUses ?? 2;
    this.maxNamed = options.maxNamed ?? 1000;
    this.maxCounted = options.maxCounted ?? 5000;
    this.maxLength = options.maxLength ?? 20_000;
    this.maxValues = options.maxValues ?? 64;
  }

  /** The name to run `text` under, or undefined to run it unnamed. */
  nameOf(text: string, valueCount: number): string | undefined {
    const name = this.named.get(text);
    if (name !== undefined) return name;
    if (valueCount === 0 || valueCount > this.maxValues || text.length > this.maxLength || this.named.size >= this.maxNamed || !NAMEABLE.test(text)) return undefined;
    const uses = (this.counted.get(text) ?? 0) + 1;
    if (uses < this.minUses) {
      if (this.counted.size >= this.maxCounted) this.counted = new Map();
      this.counted.set(text, uses);
      return undefined;
    }
    this.counted.delete(text);
    const created = `bs_${createHash('sha1').update(text).digest('base64url').slice(0, 24)}_${this.renamed}`;
    this.named.set(text, created);
    return created;
  }

  /**
   * Gives `text` a new name from its next use: the statement under its old name can no longer
   * run (after a schema change, Postgres refuses a kept `SELECT *` whose columns changed:
   * "cached plan must not change result type"), and a new name makes each connection parse
   * it again. The old one stays on the connections that have it until they close.
   */
  rename(text: string): void {
    if (!this.named.has(text)) return;
    this.named.delete(text);
    this.renamed += 1;
    this.counted.set(text, this.minUses - 1);
  }

  /** How many texts have a name. */
  get size(): number {
    return this.named.size;
  }
}

/** The part of knex's query object the client sees that naming touches. */
interface KnexQueryObject {
  sql?: string;
  bindings?: readonly unknown[];
  options?: Record<string, unknown>;
}

/** knex's Postgres client as far as it is extended here (the dialect has no type declarations). */
interface KnexPgClientClass {
  new (config: Record<string, unknown>): { _query(connection: unknown, obj: KnexQueryObject): Promise<unknown>; queryCompiler(builder: unknown, formatter?: unknown): unknown };
}

/** A `whereIn` / `whereNotIn` as knex's query compiler receives it. */
interface WhereInStatement {
  column: unknown;
  value: unknown;
  not?: boolean;
}

/** knex's Postgres query compiler as far as it is extended here. */
interface KnexPgCompilerClass {
  new (client: unknown, builder: unknown, formatter?: unknown): {
    whereIn(statement: WhereInStatement): string;
  };
}

/**
 * Whether a `whereIn` list goes as one array value: one column and only strings and finite
 * numbers (what Postgres reads back from an array literal exactly as from the list).
 */
export function isArrayList(column: unknown, value: unknown): value is Array<string | number> {
  return (
    !Array.isArray(column) &&
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((v) => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v)))
  );
}

/**
 * knex's Postgres query compiler with `whereIn(column, list)` as `column = ANY(?)` and
 * `whereNotIn` as `column <> ALL(?)`, the list one array value (ADR 0054). The same rows:
 * `x IN (a, b)` and `x = ANY('{a,b}')` agree, nulls too. But the text no longer grows with the
 * list: a batch's reads and updates by ids (100 and more) are one text whatever their number,
 * named and planned once, where each list size was a text of its own, unnamed past 64 values
 * and parsed and planned at every call (up to 9 ms of planning for 1 ms of execution).
 */
function arrayListCompiler(PgCompiler: KnexPgCompilerClass): KnexPgCompilerClass {
  return class ArrayListCompiler extends PgCompiler {
    override whereIn(statement: WhereInStatement): string {
      if (!isArrayList(statement.column, statement.value)) return super.whereIn(statement);
      const self = this as unknown as {
        _columnClause(s: WhereInStatement): string;
        client: { parameter(value: unknown, builder: unknown, holder: unknown): string };
        builder: unknown;
        bindingsHolder: unknown;
      };
      const column = self._columnClause(statement);
      const list = self.client.parameter(statement.value, self.builder, self.bindingsHolder);
      return statement.not ? `${column} <> ALL(${list})` : `${column} = ANY(${list})`;
    }
  };
}

/**
 * knex's Postgres client (what `client: 'pg'` names) that runs repeated texts as named
 * statements. A class, not a patched instance: knex builds each transaction's client from the
 * class's prototype.
 */
export function namedStatementsClient(names: StatementNames): KnexPgClientClass {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const PgClient = require('knex/lib/dialects/postgres') as KnexPgClientClass;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const Compiler = arrayListCompiler(require('knex/lib/dialects/postgres/query/pg-querycompiler') as KnexPgCompilerClass);
  return class NamedStatementsPgClient extends PgClient {
    /** Read by `isPostgresServerClient`: this client talks to a Postgres server, like 'pg'. */
    static readonly postgresServer = true;

    override queryCompiler(builder: unknown, formatter?: unknown): unknown {
      return new Compiler(this, builder, formatter);
    }

    override async _query(connection: unknown, obj: KnexQueryObject): Promise<unknown> {
      const text = obj.sql;
      const name = text && obj.options?.name === undefined ? names.nameOf(text, obj.bindings?.length ?? 0) : undefined;
      if (name === undefined) return super._query(connection, obj);
      const options = obj.options;
      obj.options = { ...options, name };
      try {
        return await super._query(connection, obj);
      } catch (err) {
        obj.options = options;
        if (!isStalePlan(err)) throw err;
        names.rename(text!);
        // Outside a transaction the statement runs again unnamed; inside one the transaction
        // has failed, and the caller's retry gets the new name.
        if ((this as { transacting?: boolean }).transacting) throw err;
        return super._query(connection, obj);
      }
    }
  };
}

/** Whether knex's `client` option names a client of a Postgres server ('pg' or the class above), not the embedded one. */
export function isPostgresServerClient(client: unknown): boolean {
  return client === 'pg' || (typeof client === 'function' && (client as { postgresServer?: boolean }).postgresServer === true);
}

/** Postgres' refusal to run a kept plan whose result columns changed (SQLSTATE 0A000). */
function isStalePlan(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | null;
  return e?.code === '0A000' && /cached plan must not change result type/.test(e.message ?? '');
}
