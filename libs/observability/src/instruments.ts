import { Gauge } from 'prom-client';
import { metricsEnabled, metricsRegistry } from './registry';
import { FastCounter, FastHistogram, type CounterSeries, type HistogramSeries } from './series';

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

export const httpRequests = new FastCounter('billstream_http_requests_total', 'HTTP requests answered, by service, method, route template and status code.', ['service', 'method', 'route', 'status'] as const, metricsRegistry);

export const httpRequestDuration = new FastHistogram('billstream_http_request_duration_seconds', 'Time from the request to the end of the answer, by service, method and route template.', ['service', 'method', 'route'] as const, LATENCY_BUCKETS, metricsRegistry);


/** One route's instruments, made once per (service, method, route) and then reused. */
interface RouteInstruments {
  duration: HistogramSeries;
  byStatus: Map<number, CounterSeries>;
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

export const kafkaPublished = new FastCounter('billstream_kafka_messages_published_total', 'Messages acknowledged by the bus, by topic (logical name, without the prefix).', ['topic'] as const, metricsRegistry);

export const kafkaPublishFailures = new FastCounter('billstream_kafka_publish_failures_total', 'Publish calls that failed or timed out, by topic.', ['topic'] as const, metricsRegistry);

export const kafkaConsumed = new FastCounter('billstream_kafka_messages_consumed_total', 'Messages handled by a consumer group (offsets committed after), by group and topic.', ['group', 'topic'] as const, metricsRegistry);

export const kafkaBatchDuration = new FastHistogram('billstream_kafka_batch_duration_seconds', 'Time a consumer group took to handle one batch, by group and topic.', ['group', 'topic'] as const, LATENCY_BUCKETS, metricsRegistry);

export const kafkaBatchFailures = new FastCounter('billstream_kafka_batch_failures_total', 'Batches whose handler failed (redelivered later), by group and topic.', ['group', 'topic'] as const, metricsRegistry);

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

export const kafkaDeadLettered = new FastCounter('billstream_kafka_messages_dead_lettered_total', 'Messages a consumer group set aside after its last attempt failed (ADR 0055), by group and topic.', ['group', 'topic'] as const, metricsRegistry);

/** A message set aside in the consumer dead letters (ADR 0055). */
export function recordDeadLettered(group: string, topic: string): void {
  if (metricsEnabled()) kafkaDeadLettered.labels(group, topic).inc();
}

// ---- outbox (libs/outbox)

export const outboxPublished = new FastCounter('billstream_outbox_published_total', 'Outbox rows published by the relay, by schema (one per service).', ['schema'] as const, metricsRegistry);

export const outboxRelayDelay = new FastHistogram('billstream_outbox_relay_delay_seconds', 'Time from the commit of an outbox row to its publication, by schema.', ['schema'] as const, [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300], metricsRegistry);

export function recordOutboxPublished(schema: string, delaysSeconds: number[]): void {
  if (!metricsEnabled()) return;
  outboxPublished.labels(schema).inc(delaysSeconds.length);
  const h = outboxRelayDelay.labels(schema);
  for (const d of delaysSeconds) h.observe(Math.max(0, d));
}

// ---- usage events (gateway and ingestion-aggregator)

export const ingestionAccepted = new FastCounter('billstream_ingestion_events_accepted_total', 'Usage events accepted and published to Kafka (the gateway\'s 202s, and usage imports).', [] as const, metricsRegistry);

export const ingestionStored = new FastCounter('billstream_ingestion_events_stored_total', 'Usage events the aggregator handled, by result: stored, duplicate or dead_lettered.', ['result'] as const, metricsRegistry);

export function recordEventsAccepted(count: number): void {
  if (metricsEnabled() && count > 0) ingestionAccepted.inc(count);
}

export function recordEventsStored(result: 'stored' | 'duplicate' | 'dead_lettered', count: number): void {
  if (metricsEnabled() && count > 0) ingestionStored.labels(result).inc(count);
}

// ---- wallet debits

export const walletDebitDuration = new FastHistogram('billstream_wallet_debit_duration_seconds', 'Time of one debit in the wallet service, from its call to its committed (or refused) result, by result.', ['result'] as const, LATENCY_BUCKETS, metricsRegistry);

export function recordDebit(result: 'ok' | 'refused' | 'error', seconds: number): void {
  if (metricsEnabled()) walletDebitDuration.labels(result).observe(seconds);
}

// ---- the entitlement check and its projection (ADR 0061)

export const entitlementChecks = new FastCounter('billstream_entitlement_checks_total', 'Entitlement checks answered (POST /v1/entitlements/check), by result: allowed or denied.', ['result'] as const, metricsRegistry);

export const projectionApplied = new FastCounter('billstream_entitlements_projection_applied_total', "Records the entitlements service's projection wrote from billing-events and customer-events, by kind (feature, entitlement, subscription, customer); a redelivery or an older version is not counted.", ['kind'] as const, metricsRegistry);

export const projectionDelay = new FastHistogram('billstream_entitlements_projection_delay_seconds', "Time from a change's event (its occurred_at) to the commit of the projection batch that applied it: how late the check sees a catalog or subscription change.", [] as const, [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300], metricsRegistry);

export function recordCheck(allowed: boolean): void {
  if (metricsEnabled()) entitlementChecks.labels(allowed ? 'allowed' : 'denied').inc();
}

/** After a projection batch committed: what it wrote per kind, and each event's delay from `occurred_at`. */
export function recordProjection(applied: Record<string, number>, occurredAt: string[], now = Date.now()): void {
  if (!metricsEnabled()) return;
  for (const [kind, count] of Object.entries(applied)) if (count > 0) projectionApplied.labels(kind).inc(count);
  for (const at of occurredAt) {
    const t = Date.parse(at);
    if (Number.isFinite(t)) projectionDelay.observe(Math.max(0, (now - t) / 1000));
  }
}

// ---- webhook deliveries

export const webhookAttempts = new FastCounter('billstream_webhook_delivery_attempts_total', 'Delivery attempts, by result: success (2xx), failure (any other answer or none).', ['result'] as const, metricsRegistry);

export const webhookRetries = new FastCounter('billstream_webhook_retries_scheduled_total', 'Failed attempts followed by a scheduled retry.', [] as const, metricsRegistry);

export const webhookExhausted = new FastCounter('billstream_webhook_deliveries_exhausted_total', 'Deliveries that failed their last attempt (no retry left).', [] as const, metricsRegistry);

export const webhookAttemptDuration = new FastHistogram('billstream_webhook_attempt_duration_seconds', 'Time of one delivery attempt (the HTTP call to the endpoint).', [] as const, [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30], metricsRegistry);

export function recordWebhookAttempt(ok: boolean, seconds: number, next: 'retry' | 'exhausted' | 'done'): void {
  if (!metricsEnabled()) return;
  webhookAttempts.labels(ok ? 'success' : 'failure').inc();
  webhookAttemptDuration.observe(seconds);
  if (next === 'retry') webhookRetries.inc();
  else if (next === 'exhausted') webhookExhausted.inc();
}

// ---- billing jobs

export const billingJobRuns = new FastCounter('billstream_billing_job_runs_total', 'Runs of a billing job, by job and result (success, failure).', ['job', 'result'] as const, metricsRegistry);

export const billingJobDuration = new FastHistogram('billstream_billing_job_duration_seconds', 'Time of one run of a billing job that found work, by job.', ['job'] as const, [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600], metricsRegistry);

export const billingJobInvoices = new FastHistogram('billstream_billing_job_invoices', 'Invoices one run of a billing job made, by job.', ['job'] as const, [0, 1, 10, 100, 1000, 10_000, 100_000], metricsRegistry);

export const billingInvoices = new FastCounter('billstream_billing_invoices_total', 'Invoices made by the billing jobs, by job.', ['job'] as const, metricsRegistry);

/** One run of a billing job that found work (`invoices` made), or that failed. */
export function recordBillingRun(job: string, ok: boolean, seconds: number, invoices: number): void {
  if (!metricsEnabled()) return;
  billingJobRuns.labels(job, ok ? 'success' : 'failure').inc();
  if (!ok) return;
  billingJobDuration.labels(job).observe(seconds);
  billingJobInvoices.labels(job).observe(invoices);
  if (invoices > 0) billingInvoices.labels(job).inc(invoices);
}

// ---- invoice email (billing, ADR 0067)

export const invoiceEmailAttempts = new FastCounter('billstream_invoice_email_attempts_total', 'Invoice email attempts to the SMTP server, by result: sent (accepted), refused (the server answered an error), unavailable (no connection or no answer).', ['result'] as const, metricsRegistry);

export function recordInvoiceEmailAttempt(result: 'sent' | 'refused' | 'unavailable'): void {
  if (metricsEnabled()) invoiceEmailAttempts.labels(result).inc();
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
