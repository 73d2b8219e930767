/**
 * Writes the Grafana dashboard of deploy/observability (ADR 0020) from the metrics of
 * libs/observability: `node scripts/grafana-dashboard.js deploy/observability/grafana/dashboards/billstream.json`.
 * The JSON is committed; npm run check:deploy checks that every metric it queries exists.
 */
const fs = require('node:fs');
const ds = { type: 'prometheus', uid: 'prometheus' };
let id = 0;
let y = 0;
const panels = [];
function row(title) {
  panels.push({ type: 'row', title, id: ++id, collapsed: false, gridPos: { h: 1, w: 24, x: 0, y }, panels: [] });
  y += 1;
}
let x = 0;
function panel(title, unit, targets, opts = {}) {
  const w = opts.w ?? 8;
  if (x + w > 24) { x = 0; y += 8; }
  panels.push({
    type: 'timeseries',
    id: ++id,
    title,
    description: opts.description,
    datasource: ds,
    gridPos: { h: 8, w, x, y },
    fieldConfig: { defaults: { unit, min: 0 }, overrides: [] },
    options: { legend: { displayMode: 'list', placement: 'bottom' }, tooltip: { mode: 'multi' } },
    targets: targets.map(([expr, legendFormat], i) => ({ datasource: ds, expr, legendFormat, refId: String.fromCharCode(65 + i) })),
  });
  x += w;
}
function endRow() { x = 0; y += 8; }
const svc = 'billstream_service=~"$service"';

row('HTTP (per route template)');
panel('Requests per second by route', 'reqps', [[`sum by (service, method, route) (rate(billstream_http_requests_total{${svc}}[$__rate_interval]))`, '{{service}} {{method}} {{route}}']]);
panel('Error ratio (5xx and 4xx) by service', 'percentunit', [
  [`sum by (service) (rate(billstream_http_requests_total{${svc},status=~"5.."}[$__rate_interval])) / sum by (service) (rate(billstream_http_requests_total{${svc}}[$__rate_interval]))`, '5xx {{service}}'],
  [`sum by (service) (rate(billstream_http_requests_total{${svc},status=~"4.."}[$__rate_interval])) / sum by (service) (rate(billstream_http_requests_total{${svc}}[$__rate_interval]))`, '4xx {{service}}'],
]);
panel('Latency p99 by route', 's', [[`histogram_quantile(0.99, sum by (le, service, method, route) (rate(billstream_http_request_duration_seconds_bucket{${svc}}[$__rate_interval])))`, '{{service}} {{method}} {{route}}']]);
endRow();

row('Kafka');
panel('Consumer lag by group and topic', 'short', [['max by (group, topic) (billstream_kafka_consumer_lag_messages)', '{{group}} / {{topic}}']]);
panel('Messages consumed per second by group', 'short', [['sum by (group, topic) (rate(billstream_kafka_messages_consumed_total[$__rate_interval]))', '{{group}} / {{topic}}']]);
panel('Messages published per second, and publish failures', 'short', [
  ['sum by (topic) (rate(billstream_kafka_messages_published_total[$__rate_interval]))', 'published {{topic}}'],
  ['sum by (topic) (rate(billstream_kafka_publish_failures_total[$__rate_interval]))', 'failed {{topic}}'],
  ['sum by (group) (rate(billstream_kafka_batch_failures_total[$__rate_interval]))', 'batch failures {{group}}'],
]);
endRow();

row('Outbox');
panel('Backlog (unpublished rows) by service schema', 'short', [['max by (schema) (billstream_outbox_backlog_messages)', '{{schema}}']]);
panel('Oldest unpublished row', 's', [['max by (schema) (billstream_outbox_oldest_unpublished_age_seconds)', '{{schema}}']]);
panel('Relay delay p99 (commit to publish)', 's', [['histogram_quantile(0.99, sum by (le, schema) (rate(billstream_outbox_relay_delay_seconds_bucket[$__rate_interval])))', '{{schema}}']]);
endRow();

row('Webhooks');
panel('Delivery attempts per second by result', 'short', [
  ['sum by (result) (rate(billstream_webhook_delivery_attempts_total[$__rate_interval]))', '{{result}}'],
  ['sum(rate(billstream_webhook_retries_scheduled_total[$__rate_interval]))', 'retries scheduled'],
  ['sum(rate(billstream_webhook_deliveries_exhausted_total[$__rate_interval]))', 'exhausted (no retry left)'],
]);
panel('Success ratio', 'percentunit', [['sum(rate(billstream_webhook_delivery_attempts_total{result="success"}[$__rate_interval])) / sum(rate(billstream_webhook_delivery_attempts_total[$__rate_interval]))', 'success']]);
panel('Pending deliveries and age of the oldest', 's', [
  ['max(billstream_webhook_oldest_pending_age_seconds)', 'oldest pending (s)'],
  ['max(billstream_webhook_pending_deliveries)', 'pending (count)'],
]);
endRow();

row('Usage events, debits, billing');
panel('Usage events: accepted vs stored per second', 'short', [
  ['sum(rate(billstream_ingestion_events_accepted_total[$__rate_interval]))', 'accepted (gateway)'],
  ['sum by (result) (rate(billstream_ingestion_events_stored_total[$__rate_interval]))', '{{result}} (aggregator)'],
]);
panel('Wallet debit latency', 's', [
  ['histogram_quantile(0.5, sum by (le) (rate(billstream_wallet_debit_duration_seconds_bucket[$__rate_interval])))', 'p50'],
  ['histogram_quantile(0.99, sum by (le) (rate(billstream_wallet_debit_duration_seconds_bucket[$__rate_interval])))', 'p99'],
  ['sum by (result) (rate(billstream_wallet_debit_duration_seconds_count[$__rate_interval]))', 'debits/s {{result}}'],
]);
panel('Billing jobs: duration and invoices per run', 's', [
  ['sum by (job) (rate(billstream_billing_job_duration_seconds_sum[$__rate_interval])) / sum by (job) (rate(billstream_billing_job_duration_seconds_count[$__rate_interval]))', 'mean run {{job}} (s)'],
  ['sum by (job) (rate(billstream_billing_job_invoices_sum[$__rate_interval])) / sum by (job) (rate(billstream_billing_job_invoices_count[$__rate_interval]))', 'invoices per run {{job}}'],
  ['sum by (job) (increase(billstream_billing_job_runs_total{result="failure"}[$__range]))', 'failed runs {{job}}'],
]);
endRow();

row('Processes');
panel('CPU (cores)', 'short', [[`sum by (billstream_service) (rate(process_cpu_seconds_total{${svc}}[$__rate_interval]))`, '{{billstream_service}}']]);
panel('Resident memory', 'bytes', [[`sum by (billstream_service) (process_resident_memory_bytes{${svc}})`, '{{billstream_service}}']]);
panel('Event loop lag p99', 's', [[`max by (billstream_service) (nodejs_eventloop_lag_p99_seconds{${svc}})`, '{{billstream_service}}']]);
endRow();

const dashboard = {
  uid: 'billstream-overview',
  title: 'Billstream',
  description: 'Billstream services (ADR 0020): HTTP by route, Kafka lag, outbox, webhooks, usage events, debits, billing jobs.',
  tags: ['billstream'],
  timezone: 'utc',
  schemaVersion: 39,
  version: 1,
  refresh: '30s',
  time: { from: 'now-1h', to: 'now' },
  templating: {
    list: [
      {
        name: 'service',
        label: 'Service',
        type: 'query',
        datasource: ds,
        query: { query: 'label_values(up, billstream_service)', refId: 'service' },
        definition: 'label_values(up, billstream_service)',
        includeAll: true,
        multi: true,
        allValue: '.*',
        current: { text: 'All', value: '$__all' },
        refresh: 2,
      },
    ],
  },
  annotations: { list: [] },
  panels,
};
fs.writeFileSync(process.argv[2] ?? 'deploy/observability/grafana/dashboards/billstream.json', JSON.stringify(dashboard, null, 2) + '\n');
