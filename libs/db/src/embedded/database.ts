import { existsSync } from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import knex, { type Knex } from 'knex';
import { SharedPgliteClient, type SharedConnection } from './client';
import { searchPathSql, SharedSession } from './session';

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

// initdb in a worker thread: the temporary database it runs on (hundreds of MB of
// WebAssembly memory) goes away with the thread instead of waiting for a garbage collection.
const INITDB_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { PGlite } = require(workerData.module);
PGlite.create(workerData.dir, { initDbStartParams: workerData.initdbArgs, startParams: workerData.startParams })
  .then((db) => db.close())
  .then(
    () => parentPort.postMessage({ ok: true }),
    (err) => parentPort.postMessage({ ok: false, error: String((err && err.stack) || err) }),
  );
`;

async function initialize(dir: string): Promise<void> {
  const worker = new Worker(INITDB_WORKER, {
    eval: true,
    workerData: { module: require.resolve('@electric-sql/pglite'), dir, initdbArgs: INITDB_ARGS, startParams: startParams() },
  });
  try {
    const result = await new Promise<{ ok: boolean; error?: string }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`the initdb worker exited with code ${code}`)));
    });
    if (!result.ok) throw new Error(`Could not create the embedded database in ${dir}: ${result.error}`);
  } finally {
    await worker.terminate();
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
      db = knex({ client: SharedPgliteClient, version: this.version, connection } as Knex.Config);
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
