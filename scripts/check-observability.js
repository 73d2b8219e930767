#!/usr/bin/env node
/**
 * Checks deploy/observability (ADR 0020; part of `npm run check:deploy`): with promtool (PATH,
 * or PROMTOOL=path; .ci/run takes it from Debian's prometheus package), `promtool check config`
 * of the compose scrape configuration, `promtool check rules` of the alerting rules and
 * `promtool test rules` of their unit tests (alerts.test.yml); always
 * a structural check: scrape targets are the services' metrics ports, every alert has a
 * severity, a summary and a runbook section that exists in docs/operations.md, the Operator's
 * PrometheusRule holds the same rules, the k8s pods carry the scrape annotations, and every
 * billstream_* metric an alert or the Grafana dashboard queries is one the code defines.
 * Run after the build (the metric names come from libs/observability/dist). Exits 1 on a problem.
 */
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const YAML = require('yaml');

const ROOT = path.resolve(__dirname, '..');
const DIR = path.join(ROOT, 'deploy', 'observability');
const SERVICES = { gateway: 8080, customer: 8081, wallet: 8082, 'ingestion-aggregator': 8083, 'webhook-dispatcher': 8084, billing: 8085, entitlements: 8086 };
const problems = [];
let checks = 0;
const check = (ok, message) => {
  checks += 1;
  if (!ok) problems.push(message);
  return ok;
};
const read = (rel) => fs.readFileSync(path.join(ROOT, rel), 'utf8');

/** The billstream_* metric families the code registers (histograms also expose _bucket, _sum, _count). */
function knownMetrics() {
  const dist = path.join(ROOT, 'libs', 'observability', 'dist', 'index.js');
  if (!fs.existsSync(dist)) return undefined;
  const { metricsRegistry } = require(dist);
  const names = new Set();
  for (const metric of metricsRegistry.getMetricsAsArray()) {
    const name = metric.name;
    names.add(name);
    if (metric.type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(name + s);
  }
  return names;
}

function metricsIn(expr) {
  // billstream_service is the target label of the scrape configurations, not a metric.
  return [...expr.matchAll(/\b(billstream_[a-z0-9_]+)/g)].map((m) => m[1]).filter((m) => m !== 'billstream_service');
}

function promtool() {
  const candidates = [process.env.PROMTOOL, 'promtool'].filter(Boolean);
  for (const bin of candidates) {
    const r = spawnSync(bin, ['--version'], { encoding: 'utf8' });
    if (r.status === 0) return bin;
  }
  return undefined;
}

const known = knownMetrics();
check(known, 'libs/observability/dist is missing: build first (npm run build)');

// Compose scrape configuration: one target per service, on its metrics port (PORT + 1000).
const prom = YAML.parse(read('deploy/observability/prometheus/prometheus.yml'));
const targets = (prom.scrape_configs ?? []).flatMap((job) => (job.static_configs ?? []).flatMap((c) => c.targets ?? []));
for (const [name, port] of Object.entries(SERVICES)) {
  check(targets.includes(`${name}:${port + 1000}`), `prometheus.yml: no scrape target ${name}:${port + 1000}`);
}
check((prom.rule_files ?? []).includes('alerts.yml'), 'prometheus.yml must load alerts.yml');

// Alerting rules, their runbooks, and the Operator's copy.
const rulesText = read('deploy/observability/prometheus/alerts.yml');
const rules = YAML.parse(rulesText);
const operations = read('docs/operations.md');
const anchors = new Set([...operations.matchAll(/^#+\s+(.+)$/gm)].map((m) => m[1].trim().toLowerCase().replace(/[^a-z0-9 -]/g, '').replace(/ /g, '-')));
const alerts = (rules.groups ?? []).flatMap((g) => g.rules ?? []);
for (const wanted of ['ConsumerLag', 'OutboxBacklog', 'WebhookFailureRatio', 'Http5xxRatio', 'BillingJobFailures']) {
  check(alerts.some((a) => a.alert?.includes(wanted)), `alerts.yml: no alert on ${wanted}`);
}
for (const rule of alerts) {
  const where = `alerts.yml ${rule.alert}`;
  check(rule.expr && rule.labels?.severity && rule.annotations?.summary, `${where}: needs expr, labels.severity and annotations.summary`);
  const runbook = /^docs\/operations\.md#(.+)$/.exec(rule.annotations?.runbook ?? '');
  if (check(runbook, `${where}: annotations.runbook must be docs/operations.md#<section>`)) {
    check(anchors.has(runbook[1]), `${where}: docs/operations.md has no section #${runbook[1]}`);
  }
  if (known) for (const m of metricsIn(rule.expr ?? '')) check(known.has(m), `${where}: unknown metric ${m}`);
}
const operator = YAML.parse(read('deploy/observability/k8s/prometheusrule.yaml'));
check(operator.kind === 'PrometheusRule', 'k8s/prometheusrule.yaml must be a PrometheusRule');
check(JSON.stringify(operator.spec?.groups) === JSON.stringify(rules.groups), 'k8s/prometheusrule.yaml does not hold the rules of prometheus/alerts.yml');

// Kubernetes: every Deployment's pods are annotated for scraping and name their metrics port.
for (const [name, port] of Object.entries(SERVICES)) {
  const docs = YAML.parseAllDocuments(read(`deploy/k8s/${name}.yaml`)).map((d) => d.toJS());
  const deployment = docs.find((d) => d?.kind === 'Deployment');
  const annotations = deployment?.spec?.template?.metadata?.annotations ?? {};
  check(annotations['prometheus.io/scrape'] === 'true', `k8s ${name}: pod annotation prometheus.io/scrape must be 'true'`);
  check(annotations['prometheus.io/port'] === String(port + 1000), `k8s ${name}: pod annotation prometheus.io/port must be ${port + 1000}`);
  const container = deployment?.spec?.template?.spec?.containers?.[0];
  check((container?.ports ?? []).some((p) => p.name === 'metrics' && p.containerPort === port + 1000), `k8s ${name}: container port metrics ${port + 1000} missing`);
  check((container?.env ?? []).some((e) => e.name === 'METRICS_PORT' && e.value === String(port + 1000)), `k8s ${name}: METRICS_PORT must be ${port + 1000}`);
}

// Grafana: the dashboard parses and queries only metrics that exist.
const dashboard = JSON.parse(read('deploy/observability/grafana/dashboards/billstream.json'));
const exprs = (dashboard.panels ?? []).flatMap((p) => (p.targets ?? []).map((t) => t.expr));
check(exprs.length >= 10, 'grafana dashboard: expected panels with Prometheus queries');
if (known) for (const expr of exprs) for (const m of metricsIn(expr)) check(known.has(m), `grafana dashboard: unknown metric ${m}`);

// promtool, where it exists.
const tool = promtool();
if (tool) {
  const config = spawnSync(tool, ['check', 'config', path.join(DIR, 'prometheus', 'prometheus.yml')], { encoding: 'utf8' });
  check(config.status === 0, `promtool check config failed:\n${config.stdout}${config.stderr}`);
  const rulesCheck = spawnSync(tool, ['check', 'rules', path.join(DIR, 'prometheus', 'alerts.yml')], { encoding: 'utf8' });
  check(rulesCheck.status === 0, `promtool check rules failed:\n${rulesCheck.stdout}${rulesCheck.stderr}`);
  // The alerts' unit tests: each fires on the series it is about, and not on the others.
  const rulesTest = spawnSync(tool, ['test', 'rules', 'alerts.test.yml'], { cwd: path.join(DIR, 'prometheus'), encoding: 'utf8' });
  check(rulesTest.status === 0, `promtool test rules failed:\n${rulesTest.stdout}${rulesTest.stderr}`);
  // Debian's promtool is built without Kubernetes service discovery: prometheus-k8s.yml is checked structurally.
  const word = (r) => (r.status === 0 ? 'ok' : 'failed');
  console.log(`check-observability: ${tool} checked prometheus.yml (${word(config)}), alerts.yml (${word(rulesCheck)}) and its tests (${word(rulesTest)})`);
} else {
  console.log('check-observability: no promtool; checked deploy/observability with the yaml parser only');
}
const k8sProm = YAML.parse(read('deploy/observability/prometheus/prometheus-k8s.yml'));
check((k8sProm.scrape_configs ?? []).some((j) => (j.kubernetes_sd_configs ?? []).length > 0), 'prometheus-k8s.yml: needs a kubernetes_sd_configs job');

if (problems.length > 0) {
  for (const p of problems) console.error(`  x ${p}`);
  console.error(`check-observability: ${problems.length} problem(s) in ${checks} checks`);
  process.exit(1);
}
console.log(`check-observability: ${checks} checks passed`);
