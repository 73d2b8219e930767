import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import knex, { type Knex } from 'knex';
import { SharedPgliteClient, type SharedConnection } from './client';
import { searchPathSql, SharedSession } from './session';
import { markTransactions } from '../held';

/**
 * What keeps a laptop's database small (measured in bench/embedded): 1 MB WAL segments
 * instead of 16 MB (a fresh directory's WAL is 1 MB, not 16), little WAL kept between
 * checkpoints, and 16 MB of shared buffers instead of 128 MB (PGlite touches them all at
 * start: about 120 MB of resident memory less).
 */
const INITDB_ARGS = ['--wal-segsize=1'];
const SETTINGS: Record<string, string> = { shared_buffers: '16MB', min_wal_size: '2MB', max_wal_size: '32MB' };

function startParams(): string[] {
  return [...PGlite.defaultStartParams, ...Object.entries(SETTINGS).flatMap(([k, v]) => ['-c', `${k}=${v}`])];
}

// initdb in a process of its own: the temporary database it runs on (hundreds of MB of
// WebAssembly memory) and the allocator's arenas go back to the system when it exits. In this
// process they stayed resident: 754 MB before a forced garbage collection; 300 MB instead of
// 190 MB when run in a worker thread (docs/adr/0012-one-embedded-database.md).
const INITDB_SCRIPT = `
const { PGlite } = require(process.env.BILLSTREAM_PGLITE_MODULE);
PGlite.create(process.argv[1], JSON.parse(process.argv[2]))
  .then((db) => db.close())
  .catch((err) => {
    process.stderr.write(String((err && err.stack) || err));
    process.exit(1);
  });
`;

async function initialize(dir: string): Promise<void> {
  const options = { initDbStartParams: INITDB_ARGS, startParams: startParams() };
  try {
    await promisify(execFile)(process.execPath, ['-e', INITDB_SCRIPT, dir, JSON.stringify(options)], {
      env: { ...process.env, BILLSTREAM_PGLITE_MODULE: require.resolve('@electric-sql/pglite') },
    });
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr;
    throw new Error(`Could not create the embedded database in ${dir}: ${stderr || String(err)}`, { cause: err });
  }
}

/**
 * One embedded PGlite database for every service of a process, each service on a schema
 * of its own (its search path), as with DATABASE_URL. PGlite has a single session: the
 * services' knex instances take turns on it (SharedSession), a query or a whole
 * transaction at a time.
 */
export class EmbeddedDatabase {
  private readonly knexes = new Map<string, Knex>();

  private constructor(
    private readonly session: SharedSession,
    private readonly version: string,
  ) {}

  /** Opens the database in `dir`, creating it (initdb) on the first open. */
  static async open(dir: string): Promise<EmbeddedDatabase> {
    if (!existsSync(path.join(dir, 'PG_VERSION'))) await initialize(dir);
    const pglite = await PGlite.create(dir, { startParams: startParams() });
    const { rows } = await pglite.query<{ server_version: string }>('SHOW server_version');
    return new EmbeddedDatabase(new SharedSession(pglite), rows[0].server_version.split(' ')[0]);
  }

  /** The knex of one service: its schema first in the search path, then public. */
  forSchema(schema: string): Knex {
    let db = this.knexes.get(schema);
    if (!db) {
      const connection: SharedConnection = {
        pglite: this.session.pglite,
        session: this.session,
        searchPath: searchPathSql([schema, 'public']),
      };
      db = markTransactions(knex({ client: SharedPgliteClient, version: this.version, connection } as Knex.Config), true);
      this.knexes.set(schema, db);
    }
    return db;
  }

  async close(): Promise<void> {
    for (const db of this.knexes.values()) await db.destroy();
    this.knexes.clear();
    await this.session.pglite.close();
  }
}
