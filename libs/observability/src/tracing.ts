import { context, propagation, SpanKind, SpanStatusCode, trace, type Context, type Span, type Tracer } from '@opentelemetry/api';
import type { EventEmitter } from 'node:events';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';

/**
 * OpenTelemetry tracing (ADR 0020): off by default, on with the standard OTEL_* variables.
 * The SDK is required only when tracing starts, so a process without tracing loads none of it;
 * until then @opentelemetry/api answers with no-op spans and every helper here returns early.
 */
let tracer: Tracer | undefined;
let shutdown: (() => Promise<void>) | undefined;

export interface TracingSettings {
  /** Where spans go: an OTLP/HTTP endpoint, the console, or an exporter given by a test. */
  exporter: 'otlp' | 'console' | SpanExporter;
  serviceName: string;
}

/**
 * The tracing the standard variables ask for, or undefined (off). On when OTEL_TRACES_EXPORTER
 * is `otlp` or `console`, or when it is unset and an OTLP endpoint is given
 * (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT); OTEL_SDK_DISABLED=true
 * and OTEL_TRACES_EXPORTER=none turn it off. OTEL_SERVICE_NAME overrides the service name.
 */
export function tracingFromEnv(defaultServiceName: string, env: NodeJS.ProcessEnv = process.env): TracingSettings | undefined {
  if ((env.OTEL_SDK_DISABLED ?? '').toLowerCase() === 'true') return undefined;
  const serviceName = env.OTEL_SERVICE_NAME || defaultServiceName;
  const exporter = (env.OTEL_TRACES_EXPORTER ?? '').trim().toLowerCase();
  if (exporter === 'otlp' || exporter === 'console') return { exporter, serviceName };
  if (exporter === '' && (env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)) return { exporter: 'otlp', serviceName };
  return undefined;
}

/** Whether this process traces. */
export function tracingEnabled(): boolean {
  return tracer !== undefined;
}

/**
 * Starts the SDK once for the process: a tracer provider with the W3C trace context
 * propagator and an async-hooks context manager, exporting in batches (OTLP/HTTP reads the
 * OTEL_EXPORTER_OTLP_* variables itself) or, for a test's in-memory exporter, span by span.
 */
export function startTracing(settings: TracingSettings): void {
  if (tracer) return;
  /* eslint-disable @typescript-eslint/no-require-imports -- the SDK loads only when tracing is on */
  const { NodeTracerProvider } = require('@opentelemetry/sdk-trace-node') as typeof import('@opentelemetry/sdk-trace-node');
  const { BatchSpanProcessor, SimpleSpanProcessor, ConsoleSpanExporter } =
    require('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base');
  const { resourceFromAttributes } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  let processor;
  if (settings.exporter === 'otlp') {
    const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
    processor = new BatchSpanProcessor(new OTLPTraceExporter());
  } else if (settings.exporter === 'console') {
    processor = new BatchSpanProcessor(new ConsoleSpanExporter());
  } else {
    processor = new SimpleSpanProcessor(settings.exporter);
  }
  /* eslint-enable @typescript-eslint/no-require-imports */
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': settings.serviceName }),
    spanProcessors: [processor],
  });
  provider.register();
  tracer = trace.getTracer('billstream');
  shutdown = async () => {
    // The last spans are flushed if the collector answers; one that does not never fails a stop.
    await provider.shutdown().catch(() => undefined);
    trace.disable();
    context.disable();
    propagation.disable();
    tracer = undefined;
  };
}

/** Flushes and stops the SDK (on process stop, and between tests). */
export async function stopTracing(): Promise<void> {
  const stop = shutdown;
  shutdown = undefined;
  await stop?.();
}

export { SpanKind };

/**
 * Runs `fn` in a new span (child of the active one, or of `parent`), ending it when `fn`
 * settles and marking it failed when `fn` throws. Without tracing, only `fn` runs.
 */
export async function inSpan<T>(
  name: string,
  options: { kind?: SpanKind; attributes?: Record<string, string | number | boolean>; parent?: Context; links?: Context[] },
  fn: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  if (!tracer) return fn(undefined);
  const parent = options.parent ?? context.active();
  const links = (options.links ?? []).flatMap((ctx) => {
    const linked = trace.getSpanContext(ctx);
    return linked ? [{ context: linked }] : [];
  });
  const span = tracer.startSpan(name, { kind: options.kind, attributes: options.attributes, links }, parent);
  try {
    return await context.with(trace.setSpan(parent, span), () => fn(span));
  } catch (err) {
    span.recordException(err as Error);
    span.setStatus({ code: SpanStatusCode.ERROR });
    throw err;
  } finally {
    span.end();
  }
}

/** Starts a span that the caller ends (an HTTP request ends when its answer is sent). */
export function startSpan(name: string, kind: SpanKind, parent?: Context, attributes?: Record<string, string | number | boolean>): Span | undefined {
  return tracer?.startSpan(name, { kind, attributes }, parent ?? context.active());
}

/**
 * Runs `fn` with `span` active (its children are made under it); `emitters` (a request and its
 * response) call their listeners in that context too, wherever they fire from.
 */
export function withSpan<T>(span: Span | undefined, fn: () => T, emitters: EventEmitter[] = []): T {
  if (!span) return fn();
  const ctx = trace.setSpan(context.active(), span);
  for (const emitter of emitters) context.bind(ctx, emitter);
  return context.with(ctx, fn);
}

const getter = {
  keys: (carrier: Record<string, string | string[] | undefined>) => Object.keys(carrier),
  get: (carrier: Record<string, string | string[] | undefined>, key: string) => {
    const v = carrier[key];
    return Array.isArray(v) ? v[0] : v;
  },
};

/** The context carried by `traceparent`/`tracestate` in HTTP or Kafka headers (the active one when none). */
export function extractContext(headers: Record<string, string | string[] | undefined>): Context {
  if (!tracer) return context.active();
  return propagation.extract(context.active(), headers, getter);
}

/**
 * Adds the active span's W3C trace context (`traceparent`, `tracestate`) to `headers`, for an
 * HTTP call or a Kafka message. Returns `headers`; without tracing or an active span, as given.
 */
export function injectTraceHeaders<H extends Record<string, string>>(headers: H): H {
  if (!tracer) return headers;
  propagation.inject(context.active(), headers);
  return headers;
}

/** Whether a span is active (a database statement outside any request or batch makes no trace of its own). */
export function inActiveSpan(): boolean {
  return tracer !== undefined && trace.getSpan(context.active()) !== undefined;
}

/** The active trace id (for log lines), or undefined. */
export function activeTraceId(): string | undefined {
  if (!tracer) return undefined;
  const ctx = trace.getSpanContext(context.active());
  return ctx && ctx.traceId !== '00000000000000000000000000000000' ? ctx.traceId : undefined;
}

/** Marks a span failed (an HTTP 5xx, a failed batch). */
export function markFailed(span: Span | undefined, message?: string): void {
  span?.setStatus({ code: SpanStatusCode.ERROR, message });
}
