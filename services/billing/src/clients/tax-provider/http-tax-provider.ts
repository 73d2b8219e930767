import { Agent, request } from 'undici';
import { bodySignature, SERVICE_SIGNATURE_HEADER } from '@billstream/http';

/** How long billing waits for the HTTP tax provider's whole answer by default (docs/api/taxes.md#http-provider). */
export const TAX_PROVIDER_TIMEOUT_MS = 5_000;
/** An answer larger than this is a failure (a provider answers a few lines of taxes). */
const MAX_ANSWER_BYTES = 1024 * 1024;

/** The provider could not be asked or did not answer a 2xx JSON body in time: the reason, for the logs and the 409. */
export class TaxProviderFailure extends Error {
  constructor(readonly reason: string) {
    super(`the tax provider failed: ${reason}`);
  }
}

/**
 * The transport of the HTTP tax provider (docs/api/taxes.md#http-provider): one POST of the exact
 * JSON `body` to `url`, signed `X-Service-Signature` (the webhooks' body signature, keyed with the
 * settings' secret), no redirect followed, the whole answer within `timeoutMs`. Answers the parsed
 * JSON of a 2xx; anything else throws `TaxProviderFailure`. Never call it inside a transaction.
 */
export class HttpTaxProvider {
  private readonly agent: Agent;

  constructor(private readonly timeoutMs: number = TAX_PROVIDER_TIMEOUT_MS) {
    this.agent = new Agent({ connect: { timeout: timeoutMs }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, keepAliveTimeout: 10_000 });
  }

  async post(url: string, secret: string, body: string): Promise<unknown> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.timeoutMs);
    try {
      const res = await request(url, {
        method: 'POST',
        dispatcher: this.agent,
        headers: { 'content-type': 'application/json', 'user-agent': 'Billstream-Tax/1', [SERVICE_SIGNATURE_HEADER.toLowerCase()]: bodySignature(secret, body) },
        body,
        signal: controller.signal,
      });
      const text = await readCapped(res.body);
      if (res.statusCode < 200 || res.statusCode > 299) throw new TaxProviderFailure(`answered ${res.statusCode}`);
      try {
        return JSON.parse(text) as unknown;
      } catch {
        throw new TaxProviderFailure('answered a body that is not JSON');
      }
    } catch (err) {
      if (err instanceof TaxProviderFailure) throw err;
      if (controller.signal.aborted) throw new TaxProviderFailure(`no answer within ${this.timeoutMs} ms`);
      throw new TaxProviderFailure(describe(err, this.timeoutMs));
    } finally {
      clearTimeout(timer);
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

async function readCapped(body: AsyncIterable<Buffer | Uint8Array | string>): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const b = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
    size += b.length;
    if (size > MAX_ANSWER_BYTES) throw new TaxProviderFailure(`answered more than ${MAX_ANSWER_BYTES} bytes`);
    chunks.push(b);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function describe(err: unknown, timeoutMs: number): string {
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e.code ?? e.cause?.code;
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') return `no answer within ${timeoutMs} ms`;
  const message = e.cause?.message ?? e.message ?? String(err);
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}
