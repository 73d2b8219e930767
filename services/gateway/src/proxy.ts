import type { Request, Response } from 'express';
import { Pool } from 'undici';
import type { ServiceName } from '@billstream/contracts';
import { ServiceUnavailableError } from '@billstream/errors';
import { INTERNAL_HEADERS, contextOf } from '@billstream/http';
import { injectTraceHeaders, inSpan, SpanKind } from '@billstream/observability';

const PASSED_REQUEST_HEADERS = ['if-match', 'idempotency-key'];
const PASSED_RESPONSE_HEADERS = ['content-type', 'etag', 'location', 'retry-after'];
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/**
 * Forwards a validated public call to the service that owns it, over a keep-alive pool,
 * with tenant, environment, actor and request id in headers guarded by the internal token.
 */
export class ServiceProxy {
  private readonly pools = new Map<ServiceName, Pool>();

  constructor(
    private readonly urls: Partial<Record<ServiceName, string>>,
    private readonly internalToken: string,
    private readonly timeoutMs = 10_000,
  ) {}

  private pool(service: ServiceName): Pool {
    let pool = this.pools.get(service);
    if (!pool) {
      const url = this.urls[service];
      if (!url) throw new ServiceUnavailableError(`No address configured for the ${service} service`);
      pool = new Pool(url, {
        connections: 128,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
        keepAliveTimeout: 30_000,
      });
      this.pools.set(service, pool);
    }
    return pool;
  }

  async forward(service: ServiceName, req: Request, res: Response): Promise<void> {
    const ctx = contextOf(res);
    const headers: Record<string, string> = {
      [INTERNAL_HEADERS.token]: this.internalToken,
      [INTERNAL_HEADERS.tenant]: ctx.tenantId,
      [INTERNAL_HEADERS.environment]: ctx.environmentId,
      [INTERNAL_HEADERS.actor]: ctx.actor,
      [INTERNAL_HEADERS.requestId]: ctx.requestId,
    };
    for (const h of PASSED_REQUEST_HEADERS) {
      const v = req.header(h);
      if (v) headers[h] = v;
    }
    let body: string | undefined;
    if (BODY_METHODS.has(req.method)) {
      body = JSON.stringify(req.body ?? {});
      headers['content-type'] = 'application/json';
    }
    // The hop to the service is a client span; the service's server span continues it (traceparent).
    const { upstream, payload } = await inSpan(`${req.method} ${service}`, { kind: SpanKind.CLIENT, attributes: { 'peer.service': service } }, async () => {
      let answer;
      try {
        answer = await this.pool(service).request({ path: req.originalUrl, method: req.method as 'GET', headers: injectTraceHeaders(headers), body });
      } catch (err) {
        throw new ServiceUnavailableError(`The ${service} service is unavailable; retry later`, undefined, { cause: err });
      }
      return { upstream: answer, payload: Buffer.from(await answer.body.arrayBuffer()) };
    });
    res.status(upstream.statusCode);
    for (const h of PASSED_RESPONSE_HEADERS) {
      const v = upstream.headers[h];
      if (typeof v === 'string') res.setHeader(h, v);
    }
    if (payload.length > 0) res.send(payload);
    else res.end();
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.close()));
    this.pools.clear();
  }
}
