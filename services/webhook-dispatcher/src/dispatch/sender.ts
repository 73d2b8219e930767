import { Agent, request } from 'undici';
import { isDomainError } from '@billstream/errors';
import { deliveryHeaders } from '../signing';
import type { UrlPolicy } from '../url-policy';

export interface Attempt {
  url: string;
  secret: string;
  envelopeId: string;
  /** The envelope's exact bytes. */
  body: string;
}

export type AttemptOutcome =
  | { kind: 'done'; ok: boolean; responseCode: number | null; error: string | null; durationMs: number; attemptedAt: Date }
  /** Cut short by `abortAll` (a shutdown): not an attempt, the task is released for another try. */
  | { kind: 'aborted' };

const MAX_DRAINED_BYTES = 64 * 1024;

function describe(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e.code ?? e.cause?.code;
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') {
    return `no response within ${timeoutMs} ms`;
  }
  const message = e.cause?.message ?? e.message ?? String(err);
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}

/**
 * Sends one signed POST: no redirect is followed, every connection checks the address it
 * resolved to, and anything but a 2xx within the timeout is a failure.
 */
export class WebhookSender {
  private readonly agent: Agent;
  private readonly inFlight = new Set<AbortController>();
  private stopped = false;

  constructor(
    private readonly policy: UrlPolicy,
    private readonly timeoutMs: number,
  ) {
    this.agent = new Agent({
      connect: { lookup: policy.lookup, timeout: timeoutMs },
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      keepAliveTimeout: 10_000,
    });
  }

  /** Sends one attempt; `timeoutMs` may shorten the configured limit. */
  async send(attempt: Attempt, options: { timeoutMs?: number } = {}): Promise<AttemptOutcome> {
    const timeoutMs = Math.min(options.timeoutMs ?? this.timeoutMs, this.timeoutMs);
    const attemptedAt = new Date();
    const started = performance.now();
    const done = (ok: boolean, responseCode: number | null, error: string | null): AttemptOutcome => ({
      kind: 'done',
      ok,
      responseCode,
      error,
      durationMs: Math.round(performance.now() - started),
      attemptedAt,
    });
    if (this.stopped) return { kind: 'aborted' };
    try {
      this.policy.checkUrl(attempt.url);
    } catch (err) {
      return done(false, null, isDomainError(err) ? err.message : String(err));
    }
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    this.inFlight.add(controller);
    try {
      const res = await request(attempt.url, {
        method: 'POST',
        dispatcher: this.agent,
        headers: deliveryHeaders(attempt.secret, attempt.envelopeId, attempt.body, attemptedAt),
        body: attempt.body,
        signal: controller.signal,
      });
      await res.body.dump({ limit: MAX_DRAINED_BYTES, signal: controller.signal }).catch(() => undefined);
      const ok = res.statusCode >= 200 && res.statusCode < 300;
      return done(ok, res.statusCode, ok ? null : `endpoint answered HTTP ${res.statusCode}`);
    } catch (err) {
      if (this.stopped) return { kind: 'aborted' };
      if (controller.signal.aborted) return done(false, null, `no response within ${timeoutMs} ms`);
      return done(false, null, describe(err, timeoutMs));
    } finally {
      clearTimeout(timer);
      this.inFlight.delete(controller);
    }
  }

  /** Cuts every attempt in flight short (outcome `aborted`) and refuses new ones. */
  abortAll(): void {
    this.stopped = true;
    for (const controller of this.inFlight) controller.abort();
  }

  async close(): Promise<void> {
    await this.agent.destroy();
  }
}
