import { Counter, Gauge, Histogram } from 'prom-client';
import { metricsEnabled, metricsRegistry } from './registry';

/**
 * Every metric of Billstream (ADR 0020, docs/operations.md lists them). Names follow the
 * Prometheus conventions: `billstream_` prefix, base units (`_seconds`), `_total` for
 * counters. Labels are bounded: service names, route templates, topic and consumer group
 * names, status codes and fixed outcome words; never an id, a tenant or a customer.
 *
 * Code records through the functions below, which do nothing while metrics are off
 * (METRICS_ENABLED=false), so the hot paths pay one boolean test then.
 */
const registers = [metricsRegistry];

/** Request latency buckets: 1 ms to 10 s. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export const httpRequests = new Counter({
  name: 'billstream_http_requests_total',
  help: 'HTTP requests answered, by service, method, route template and status code.',
  labelNames: ['service', 'method', 'route', 'status'] as const,
  registers,
});

export const httpRequestDuration = new Histogram({
  name: 'billstream_http_request_duration_seconds',
  help: 'Time from the request to the end of the answer, by service, method and route template.',
  labelNames: ['service', 'method', 'route'] as const,
  buckets: LATENCY_BUCKETS,
  registers,
});

type CounterChild = ReturnType<typeof httpRequests.labels>;
type HistogramChild = ReturnType<typeof httpRequestDuration.labels>;

/** One route's instruments, made once per (service, method, route) and then reused. */
interface RouteInstruments {
  duration: HistogramChild;
  byStatus: Map<number, CounterChild>;
  labels: [string, string, string];
}

const routeCache = new Map<string, Map<string, Map<string, RouteInstruments>>>();

function routeInstruments(service: string, method: string, route: string): RouteInstruments {
  let byMethod = routeCache.get(service);
  if (!byMethod) routeCache.set(service, (byMethod = new Map()));
  let byRoute = byMethod.get(method);
  if (!byRoute) byMethod.set(method, (byRoute = new Map()));
  let found = byRoute.get(route);
  if (!found) {
    found = { duration: httpRequestDuration.labels(service, method, route), byStatus: new Map(), labels: [service, method, route] };
    byRoute.set(route, found);
  }
  return found;
}

/**
 * One answered request. `route` is the route template (`/v1/customers/:customer_id`) or
 * `unmatched`: never the path itself, which holds ids.
 */
export function recordHttpRequest(service: string, method: string, route: string, status: number, seconds: number): void {
  if (!metricsEnabled()) return;
  const inst = routeInstruments(service, method, route);
  let counter = inst.byStatus.get(status);
  if (!counter) {
    counter = httpRequests.labels(inst.labels[0], inst.labels[1], inst.labels[2], String(status));
    inst.byStatus.set(status, counter);
  }
  counter.inc();
  inst.duration.observe(seconds);
}

// ---- Kafka (libs/bus)

export const kafkaPublished = new Counter({
  name: 'billstream_kafka_messages_published_total',
  help: 'Messages acknowledged by the bus, by topic (logical name, without the prefix).',
  labelNames: ['topic'] as const,
  registers,
});

export const kafkaPublishFailures = new Counter({
  name: 'billstream_kafka_publish_failures_total',
  help: 'Publish calls that failed or timed out, by topic.',
  labelNames: ['topic'] as const,
  registers,
});

export const kafkaConsumed = new Counter({
  name: 'billstream_kafka_messages_consumed_total',
  help: 'Messages handled by a consumer group (offsets committed after), by group and topic.',
  labelNames: ['group', 'topic'] as const,
  registers,
});

export const kafkaBatchDuration = new Histogram({
  name: 'billstream_kafka_batch_duration_seconds',
  help: 'Time a consumer group took to handle one batch, by group and topic.',
  labelNames: ['group', 'topic'] as const,
  buckets: LATENCY_BUCKETS,
  registers,
});

export const kafkaBatchFailures = new Counter({
  name: 'billstream_kafka_batch_failures_total',
  help: 'Batches whose handler failed (redelivered later), by group and topic.',
  labelNames: ['group', 'topic'] as const,
  registers,
});

export function recordPublish(topic: string, messages: number, ok: boolean): void {
  if (!metricsEnabled()) return;
  if (ok) kafkaPublished.labels(topic).inc(messages);
  else kafkaPublishFailures.labels(topic).inc();
}

export function recordBatch(group: string, topic: string, messages: number, seconds: number, ok: boolean): void {
  if (!metricsEnabled()) return;
  if (ok) {
    kafkaConsumed.labels(group, topic).inc(messages);
    kafkaBatchDuration.labels(group, topic).observe(seconds);
  } else {
    kafkaBatchFailures.labels(group, topic).inc();
  }
}

// ---- outbox (libs/outbox)

export const outboxPublished = new Counter({
  name: 'billstream_outbox_published_total',
  help: 'Outbox rows published by the relay, by schema (one per service).',
  labelNames: ['schema'] as const,
  registers,
});

export const outboxRelayDelay = new Histogram({
  name: 'billstream_outbox_relay_delay_seconds',
  help: 'Time from the commit of an outbox row to its publication, by schema.',
  labelNames: ['schema'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
  registers,
});

export function recordOutboxPublished(schema: string, delaysSeconds: number[]): void {
  if (!metricsEnabled()) return;
  outboxPublished.labels(schema).inc(delaysSeconds.length);
  const h = outboxRelayDelay.labels(schema);
  for (const d of delaysSeconds) h.observe(Math.max(0, d));
}

// ---- usage events (gateway and ingestion-aggregator)

export const ingestionAccepted = new Counter({
  name: 'billstream_ingestion_events_accepted_total',
  help: 'Usage events the gateway accepted (202, published to Kafka).',
  registers,
});

export const ingestionStored = new Counter({
  name: 'billstream_ingestion_events_stored_total',
  help: 'Usage events the aggregator handled, by result: stored, duplicate or dead_lettered.',
  labelNames: ['result'] as const,
  registers,
});

export function recordEventsAccepted(count: number): void {
  if (metricsEnabled() && count > 0) ingestionAccepted.inc(count);
}

export function recordEventsStored(result: 'stored' | 'duplicate' | 'dead_lettered', count: number): void {
  if (metricsEnabled() && count > 0) ingestionStored.labels(result).inc(count);
}

// ---- wallet debits

export const walletDebitDuration = new Histogram({
  name: 'billstream_wallet_debit_duration_seconds',
  help: 'Time of one debit in the wallet service, from its call to its committed (or refused) result, by result.',
  labelNames: ['result'] as const,
  buckets: LATENCY_BUCKETS,
  registers,
});

export function recordDebit(result: 'ok' | 'refused' | 'error', seconds: number): void {
  if (metricsEnabled()) walletDebitDuration.labels(result).observe(seconds);
}

// ---- webhook deliveries

export const webhookAttempts = new Counter({
  name: 'billstream_webhook_delivery_attempts_total',
  help: 'Delivery attempts, by result: success (2xx), failure (any other answer or none).',
  labelNames: ['result'] as const,
  registers,
});

export const webhookRetries = new Counter({
  name: 'billstream_webhook_retries_scheduled_total',
  help: 'Failed attempts followed by a scheduled retry.',
  registers,
});

export const webhookExhausted = new Counter({
  name: 'billstream_webhook_deliveries_exhausted_total',
  help: 'Deliveries that failed their last attempt (no retry left).',
  registers,
});

export const webhookAttemptDuration = new Histogram({
  name: 'billstream_webhook_attempt_duration_seconds',
  help: 'Time of one delivery attempt (the HTTP call to the endpoint).',
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers,
});

export function recordWebhookAttempt(ok: boolean, seconds: number, next: 'retry' | 'exhausted' | 'done'): void {
  if (!metricsEnabled()) return;
  webhookAttempts.labels(ok ? 'success' : 'failure').inc();
  webhookAttemptDuration.observe(seconds);
  if (next === 'retry') webhookRetries.inc();
  else if (next === 'exhausted') webhookExhausted.inc();
}

// ---- billing jobs

export const billingJobRuns = new Counter({
  name: 'billstream_billing_job_runs_total',
  help: 'Runs of a billing job, by job and result (success, failure).',
  labelNames: ['job', 'result'] as const,
  registers,
});

export const billingJobDuration = new Histogram({
  name: 'billstream_billing_job_duration_seconds',
  help: 'Time of one run of a billing job that found work, by job.',
  labelNames: ['job'] as const,
  buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600],
  registers,
});

export const billingJobInvoices = new Histogram({
  name: 'billstream_billing_job_invoices',
  help: 'Invoices one run of a billing job made, by job.',
  labelNames: ['job'] as const,
  buckets: [0, 1, 10, 100, 1000, 10_000, 100_000],
  registers,
});

export const billingInvoices = new Counter({
  name: 'billstream_billing_invoices_total',
  help: 'Invoices made by the billing jobs, by job.',
  labelNames: ['job'] as const,
  registers,
});

/** One run of a billing job that found work (`invoices` made), or that failed. */
export function recordBillingRun(job: string, ok: boolean, seconds: number, invoices: number): void {
  if (!metricsEnabled()) return;
  billingJobRuns.labels(job, ok ? 'success' : 'failure').inc();
  if (!ok) return;
  billingJobDuration.labels(job).observe(seconds);
  billingJobInvoices.labels(job).observe(invoices);
  if (invoices > 0) billingInvoices.labels(job).inc(invoices);
}

// ---- gauges read when Prometheus scrapes

/** A source of gauge samples, asked at each scrape (consumer lag, backlogs, pending ages). */
export type GaugeSource = () => Promise<Array<{ labels: Record<string, string>; value: number }>>;

/** A source that does not answer within this (a broker or database down) is left out of the scrape. */
const SOURCE_TIMEOUT_MS = 2000;

function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error('gauge source timed out')), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

function scrapedGauge(name: string, help: string, labelNames: readonly string[]) {
  const sources = new Set<GaugeSource>();
  new Gauge({
    name,
    help,
    labelNames,
    registers,
    async collect() {
      this.reset();
      const results = await Promise.allSettled([...sources].map((s) => withDeadline(s(), SOURCE_TIMEOUT_MS)));
      for (const r of results) {
        if (r.status !== 'fulfilled') continue;
        for (const sample of r.value) this.set(sample.labels, sample.value);
      }
    },
  });
  /** Adds a source; the returned function removes it (on stop). */
  return (source: GaugeSource): (() => void) => {
    sources.add(source);
    return () => sources.delete(source);
  };
}

export const addConsumerLagSource = scrapedGauge(
  'billstream_kafka_consumer_lag_messages',
  'Messages of a topic not yet committed by a consumer group, summed over partitions, by group and topic.',
  ['group', 'topic'],
);

export const addOutboxBacklogSource = scrapedGauge(
  'billstream_outbox_backlog_messages',
  'Outbox rows committed but not yet published, by schema.',
  ['schema'],
);

export const addOutboxOldestSource = scrapedGauge(
  'billstream_outbox_oldest_unpublished_age_seconds',
  'Age of the oldest unpublished outbox row (0 when none), by schema.',
  ['schema'],
);

export const addWebhookPendingSource = scrapedGauge(
  'billstream_webhook_pending_deliveries',
  'Delivery attempts waiting to be sent (due or scheduled for a retry).',
  [],
);

export const addWebhookOldestPendingSource = scrapedGauge(
  'billstream_webhook_oldest_pending_age_seconds',
  'Age of the oldest delivery still pending (0 when none).',
  [],
);
