import type { IncomingHttpHeaders } from 'node:http';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Request, Response } from 'express';
import { Pool, type Dispatcher } from 'undici';
import type { ServiceName } from '@billstream/contracts';
import { PayloadTooLargeError, ServiceUnavailableError } from '@billstream/errors';
import { INTERNAL_HEADERS, contextOf, type RequestContext } from '@billstream/http';
import { injectTraceHeaders, inSpan, SpanKind } from '@billstream/observability';

/** `accept`: a signed link's refusal is a page for a browser, the error envelope for any other client (ADR 0059). */
const PASSED_REQUEST_HEADERS = ['if-match', 'idempotency-key', 'accept'];
/** With the document headers of invoice documents (ADR 0059): their policy, nosniff, no referrer, no shared caching. */
const PASSED_RESPONSE_HEADERS = ['content-type', 'etag', 'location', 'retry-after', 'cache-control', 'content-security-policy', 'x-content-type-options', 'referrer-policy'];
const PASSED = new Set(PASSED_RESPONSE_HEADERS);
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);
/** Headers of a streamed file answer (downloads). */
const STREAMED_RESPONSE_HEADERS = ['content-length', 'content-disposition'];
/** An upload of 100 MiB is stored before the owner answers: far longer than a JSON call. */
const UPLOAD_TIMEOUT_MS = 300_000;

/**
 * One call through undici's dispatcher, its answer collected whole: the status, the passed
 * headers and the body. `request()` would make a body stream and its promises per call, all
 * garbage a moment later; a lean route's answer is small and read whole anyway (ADR 0027,
 * amended). An error before or during the answer rejects.
 */
function whole(pool: Pool, options: Dispatcher.DispatchOptions): Promise<{ status: number; payload: Buffer; headers: Record<string, string> }> {
  return new Promise((resolve, reject) => {
    let status = 0;
    const passed: Record<string, string> = {};
    const chunks: Buffer[] = [];
    pool.dispatch(options, {
      onConnect() {},
      onHeaders(statusCode, rawHeaders) {
        // 1xx answers come before the final one.
        if (statusCode < 200) return true;
        status = statusCode;
        for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
          const name = rawHeaders[i].toString('latin1').toLowerCase();
          if (PASSED.has(name)) passed[name] = rawHeaders[i + 1].toString('utf8');
        }
        return true;
      },
      onData(chunk) {
        chunks.push(chunk);
        return true;
      },
      onComplete() {
        resolve({ status, payload: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks), headers: passed });
      },
      onError(err) {
        reject(err);
      },
    });
  });
}

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

  private headersOf(req: Request, res: Response): Record<string, string> {
    return this.internalHeaders(contextOf(res), req.headers);
  }

  /** The internal headers of a forwarded call: token, tenant, environment, actor, request id, and the passed request headers. */
  private internalHeaders(ctx: RequestContext, requestHeaders: IncomingHttpHeaders): Record<string, string> {
    const headers: Record<string, string> = {
      [INTERNAL_HEADERS.token]: this.internalToken,
      [INTERNAL_HEADERS.tenant]: ctx.tenantId,
      [INTERNAL_HEADERS.environment]: ctx.environmentId,
      [INTERNAL_HEADERS.actor]: ctx.actor,
      [INTERNAL_HEADERS.requestId]: ctx.requestId,
    };
    if (ctx.permissions) headers[INTERNAL_HEADERS.permissions] = ctx.permissions.join(',');
    for (const h of PASSED_REQUEST_HEADERS) {
      const v = requestHeaders[h];
      if (typeof v === 'string' && v) headers[h] = v;
    }
    return headers;
  }

  /**
   * Forwards a call; with `stream` the answer (a file download) is piped through as it comes
   * instead of read whole first.
   */
  async forward(service: ServiceName, req: Request, res: Response, options: { stream?: boolean } = {}): Promise<void> {
    const headers = this.headersOf(req, res);
    let body: string | undefined;
    if (BODY_METHODS.has(req.method)) {
      body = JSON.stringify(req.body ?? {});
      headers['content-type'] = 'application/json';
    }
    // The hop to the service is a client span (until its answer's headers); the service's server span continues it (traceparent).
    const upstream = await inSpan(`${req.method} ${service}`, { kind: SpanKind.CLIENT, attributes: { 'peer.service': service } }, async () => {
      try {
        return await this.pool(service).request({ path: req.originalUrl, method: req.method as 'GET', headers: injectTraceHeaders(headers), body });
      } catch (err) {
        throw new ServiceUnavailableError(`The ${service} service is unavailable; retry later`, undefined, { cause: err });
      }
    });
    if (options.stream && upstream.statusCode === 200) {
      res.status(200);
      for (const h of [...PASSED_RESPONSE_HEADERS, ...STREAMED_RESPONSE_HEADERS]) {
        const v = upstream.headers[h];
        if (typeof v === 'string') res.setHeader(h, v);
      }
      // A client gone mid-download ends the upstream read too.
      await pipeline(upstream.body, res).catch(() => upstream.body.destroy());
      return;
    }
    await this.answer(upstream, res);
  }

  /**
   * Forwards a call whose body is a file (a `rawBody` route): the request body streams to the
   * owner as it arrives, at most `maxBytes` (413 beyond, also when Content-Length says so up
   * front). The owner stores it; this process never holds the file.
   */
  async forwardUpload(service: ServiceName, req: Request, res: Response, maxBytes: number): Promise<void> {
    const tooLarge = () => new PayloadTooLargeError(`The file is larger than ${maxBytes} bytes (100 MiB)`, { limit_bytes: maxBytes });
    const declared = req.header('content-length');
    if (declared !== undefined && Number(declared) > maxBytes) {
      req.resume();
      throw tooLarge();
    }
    const headers = injectTraceHeaders({ ...this.headersOf(req, res), 'content-type': req.header('content-type') ?? 'application/octet-stream' });
    let size = 0;
    let over = false;
    const counted = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        size += chunk.length;
        if (size > maxBytes) {
          over = true;
          cb(tooLarge());
        } else cb(null, chunk);
      },
    });
    req.on('error', (err) => counted.destroy(err));
    req.pipe(counted);
    let upstream;
    try {
      upstream = await this.pool(service).request({
        path: req.originalUrl,
        method: 'POST',
        headers,
        body: counted,
        headersTimeout: UPLOAD_TIMEOUT_MS,
        bodyTimeout: UPLOAD_TIMEOUT_MS,
      });
    } catch (err) {
      if (over) {
        req.resume();
        throw tooLarge();
      }
      throw new ServiceUnavailableError(`The ${service} service is unavailable; retry later`, undefined, { cause: err });
    }
    await this.answer(upstream, res);
  }

  /**
   * `forward` for a lean route (ADR 0027): the body as the client sent it (a POST, PUT or PATCH;
   * none otherwise, as `forward`), to `path` (the request's, no query), the owner's answer to
   * send as it is.
   */
  async forwardLean(service: ServiceName, ctx: RequestContext, method: string, path: string, body: unknown, requestHeaders: IncomingHttpHeaders): Promise<{ status: number; payload: Buffer; headers: Record<string, string> }> {
    const headers = this.internalHeaders(ctx, requestHeaders);
    const withBody = BODY_METHODS.has(method);
    if (withBody) headers['content-type'] = 'application/json';
    try {
      return await whole(this.pool(service), { path, method: method as 'POST', headers, body: withBody ? JSON.stringify(body ?? {}) : undefined });
    } catch (err) {
      throw new ServiceUnavailableError(`The ${service} service is unavailable; retry later`, undefined, { cause: err });
    }
  }

  private async answer(upstream: Dispatcher.ResponseData, res: Response): Promise<void> {
    const payload = Buffer.from(await upstream.body.arrayBuffer());
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
