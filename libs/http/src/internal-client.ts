import { Pool } from 'undici';
import type { Scope } from '@billstream/contracts';
import { ServiceUnavailableError } from '@billstream/errors';
import { heldTransaction, injectTraceHeaders } from '@billstream/observability';
import { INTERNAL_HEADERS } from './context';

export interface InternalClientOptions {
  /** The called service, as named in error messages ("customer", "ingestion"). */
  service: string;
  /** Its base URL, read at the first call (undefined: not configured). */
  baseUrl: () => string | undefined;
  internalToken: string;
  /** The calling service, sent as the actor. */
  actor: string;
  timeoutMs?: number;
}

export interface InternalAnswer {
  status: number;
  /** The response body as text ('' when empty). */
  text: string;
}

/** Calls made inside a transaction on Postgres, warned about once per path (ADR 0055). */
const warned = new Set<string>();

/**
 * No code calls another service while it holds a database transaction (ADR 0055). On the
 * embedded database the call would wait for the session its caller holds (about a minute,
 * then every request of the process waited with it): it fails at once instead. On Postgres
 * it is warned about, once per called path.
 */
function refuseInsideTransaction(service: string, method: string, path: string): void {
  const held = heldTransaction();
  if (!held) return;
  const what = `a call to the ${service} service (${method} ${path.split('?')[0]}) inside a database transaction`;
  if (held.embedded) throw new Error(`Refused ${what}: no service is called while a transaction is held (ADR 0055)`);
  if (warned.has(what)) return;
  warned.add(what);
  process.emitWarning(`${what}: no service is called while a transaction is held (ADR 0055)`, { code: 'BILLSTREAM_CALL_IN_TRANSACTION' });
}

/**
 * A call from one service to another's API, inside the stack: the internal token and the
 * caller's tenant, environment and request id in headers (as the gateway forwards them), one
 * connection pool per called service. Any failure to get an answer is a 503
 * `service_unavailable` naming the called service; the answer's status is the caller's to read.
 */
export class InternalClient {
  private pool?: Pool;

  constructor(private readonly options: InternalClientOptions) {}

  private connection(): Pool {
    if (!this.pool) {
      const url = this.options.baseUrl();
      if (!url) throw new ServiceUnavailableError(`The ${this.options.service} service address is not configured`);
      const timeout = this.options.timeoutMs ?? 5000;
      this.pool = new Pool(url, { connections: 16, headersTimeout: timeout, bodyTimeout: timeout });
    }
    return this.pool;
  }

  async call(scope: Scope, method: 'GET' | 'POST', path: string, requestId: string, body?: unknown): Promise<InternalAnswer> {
    refuseInsideTransaction(this.options.service, method, path);
    const pool = this.connection();
    try {
      const res = await pool.request({
        path,
        method,
        headers: injectTraceHeaders({
          [INTERNAL_HEADERS.token]: this.options.internalToken,
          [INTERNAL_HEADERS.tenant]: scope.tenantId,
          [INTERNAL_HEADERS.environment]: scope.environmentId,
          [INTERNAL_HEADERS.actor]: this.options.actor,
          [INTERNAL_HEADERS.requestId]: requestId,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        }),
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.statusCode, text: await res.body.text() };
    } catch (err) {
      throw new ServiceUnavailableError(`The ${this.options.service} service is unavailable; retry later`, undefined, { cause: err });
    }
  }

  async close(): Promise<void> {
    await this.pool?.close();
  }
}
