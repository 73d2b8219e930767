import type { PGlite } from '@electric-sql/pglite';
import ClientPGLite from 'knex-pglite';
import type { SharedSession } from './session';

export interface SharedConnection {
  /** knex-pglite reads the database from here (it would open one of its own without it). */
  pglite: PGlite;
  session: SharedSession;
  /** The `SET search_path` statement of this knex's schema. */
  searchPath: string;
}

const DEFAULT_ACQUIRE_TIMEOUT_MS = 60_000;

/**
 * knex-pglite's client on a shared session: one knex per service, one PGlite per process.
 * The session stands in for the connection pool: acquiring a connection (for a query or for
 * a whole transaction) takes the session with this knex's search path, releasing it lends
 * it to the next holder. Destroying the knex leaves the database open (its owner closes it).
 */
export class SharedPgliteClient extends ClientPGLite {
  private destroyed = false;

  private get shared(): SharedConnection {
    return this.config.connection as unknown as SharedConnection;
  }

  override initializePool(): void {
    // No pool: the shared session is the only connection (see acquireConnection).
  }

  override async acquireConnection(): Promise<PGlite> {
    if (this.destroyed) throw new Error('Unable to acquire a connection: this knex was destroyed');
    const { session, searchPath } = this.shared;
    return session.acquire(searchPath, this.config.acquireConnectionTimeout ?? DEFAULT_ACQUIRE_TIMEOUT_MS);
  }

  override async releaseConnection(): Promise<void> {
    this.shared.session.release();
  }

  override async destroy(callback?: (err?: unknown) => void): Promise<void> {
    this.destroyed = true;
    callback?.();
  }
}
