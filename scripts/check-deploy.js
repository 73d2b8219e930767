#!/usr/bin/env node
/**
 * Checks the deployment files without Docker or a cluster (`npm run check:deploy`, run by CI):
 * the Dockerfile's targets, and docker-compose.yml and every manifest under deploy/k8s parsed with `yaml`, their
 * structure checked: services, images, healthchecks, depends_on conditions, Deployments and
 * Services with /readyz and /healthz probes, resource requests, Secret and ConfigMap
 * references, and that every variable a service requires (read from its built config) is set.
 * When a `docker-compose` binary exists, its own parser (`docker-compose config -q`) runs too.
 */
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const YAML = require('yaml');
const { composeEnv, parseEnv } = require('./compose-env');

const ROOT = path.resolve(__dirname, '..');
const K8S_DIR = path.join(ROOT, 'deploy', 'k8s');
const SERVICES = {
  gateway: { port: 8080, schema: 'gateway' },
  customer: { port: 8081, schema: 'customer' },
  wallet: { port: 8082, schema: 'wallet' },
  'ingestion-aggregator': { port: 8083, schema: 'ingestion' },
  'webhook-dispatcher': { port: 8084, schema: 'webhook' },
  billing: { port: 8085, schema: 'billing' },
  entitlements: { port: 8086, schema: 'entitlements' },
};
/** Variables holding a secret: compose must require them (`${X:?...}`) and never give a default (ADR 0034). */
const SECRET_NAME = /(TOKEN|PASSWORD|API_KEY|SECRET)$/;
const REQUIRED_REF = /^\$\{[A-Z][A-Z0-9_]*:\?[^}]+\}$/;
const CONDITIONS = new Set(['service_started', 'service_healthy', 'service_completed_successfully']);

const problems = [];
let checks = 0;
function check(ok, message) {
  checks++;
  if (!ok) problems.push(message);
  return ok;
}

function parseYaml(file, text) {
  const docs = YAML.parseAllDocuments(text, { merge: true });
  for (const doc of docs) {
    for (const err of doc.errors) problems.push(`${file}: ${err.message}`);
  }
  return docs.map((d) => d.toJS({ maxAliasCount: -1 })).filter((d) => d !== null && d !== undefined);
}

/** Variables each service reads, from its built config module (required = no default). */
function serviceVariables() {
  const common = path.join(ROOT, 'libs', 'config', 'dist', 'index.js');
  if (!fs.existsSync(common)) return undefined;
  const shapes = [require(common).commonServiceEnv];
  const out = {};
  for (const name of Object.keys(SERVICES)) {
    const own = [...shapes];
    const configFile = path.join(ROOT, 'services', name, 'dist', 'config.js');
    if (fs.existsSync(configFile)) {
      for (const value of Object.values(require(configFile))) {
        const isShape =
          value && typeof value === 'object' && !('safeParse' in value) &&
          Object.values(value).length > 0 && Object.values(value).every((s) => s && typeof s.safeParse === 'function');
        if (isShape) own.push(value);
      }
    }
    const all = Object.assign({}, ...own);
    out[name] = {
      all: Object.keys(all),
      required: Object.keys(all).filter((k) => !all[k].safeParse(undefined).success),
    };
  }
  return out;
}

/** The value a compose string has when its variables are unset: `${X:-default}` -> default. */
function withDefaults(value) {
  return String(value ?? '').replace(/\$\{[A-Z0-9_]+:-([^}]*)\}/g, '$1');
}

/** No secret of the compose file has a default; every one is required from .env or the environment. */
function checkComposeSecrets(text, services) {
  for (const m of text.matchAll(/\$\{([A-Z][A-Z0-9_]*):?-/g)) {
    check(!SECRET_NAME.test(m[1]), `compose: \${${m[1]}} has a default; a secret must be required (\${${m[1]}:?...}, written by npm run compose:env)`);
  }
  for (const [name, service] of Object.entries(services)) {
    for (const [variable, value] of Object.entries(service.environment ?? {})) {
      if (SECRET_NAME.test(variable)) check(REQUIRED_REF.test(String(value)), `compose: ${name} ${variable} must be a required variable (\${X:?...}), is ${value}`);
      if (variable === 'DATABASE_URL') {
        const password = /^postgres:\/\/[^:]+:(.*)@[^@]+$/.exec(String(value))?.[1] ?? '';
        check(REQUIRED_REF.test(password), `compose: ${name} DATABASE_URL must take its password from a required variable (\${X_DB_PASSWORD:?...})`);
      }
    }
  }
}

function checkCompose(variables) {
  const file = path.join(ROOT, 'docker-compose.yml');
  if (!check(fs.existsSync(file), 'docker-compose.yml is missing')) return;
  const text = fs.readFileSync(file, 'utf8');
  const [compose] = parseYaml('docker-compose.yml', text);
  const services = compose?.services ?? {};
  checkComposeSecrets(text, services);
  for (const name of ['postgres', 'kafka', 'kafka-init', ...Object.keys(SERVICES)]) {
    check(services[name], `compose: service ${name} is missing`);
  }
  const kafka = services.kafka ?? {};
  // The base images are the official ones unless a variable picks another (deploy/compose/ci.sh
  // selects its stand-ins built where no registry answers through KAFKA_IMAGE and POSTGRES_IMAGE).
  check(/^apache\/kafka:3\.9\.\d+$/.test(withDefaults(kafka.image)), `compose: kafka image must default to apache/kafka:3.9.x (is ${kafka.image})`);
  check(/^\$\{KAFKA_IMAGE:-/.test(kafka.image ?? ''), 'compose: the kafka image must be selectable with KAFKA_IMAGE');
  check(services['kafka-init']?.image === kafka.image, 'compose: kafka-init must run the kafka image');
  check(String(kafka.environment?.KAFKA_PROCESS_ROLES ?? '').includes('controller'), 'compose: kafka must run in KRaft mode (KAFKA_PROCESS_ROLES with controller)');
  check(!Object.keys(services).some((s) => /zookeeper/i.test(s)), 'compose: no ZooKeeper in a KRaft stack');
  check(/^postgres:16(\.|$)/.test(withDefaults(services.postgres?.image)), 'compose: postgres image must default to postgres:16');
  check(/^\$\{POSTGRES_IMAGE:-/.test(services.postgres?.image ?? ''), 'compose: the postgres image must be selectable with POSTGRES_IMAGE');
  check(services['kafka-init']?.depends_on?.kafka?.condition === 'service_healthy', 'compose: kafka-init must wait for a healthy kafka');

  for (const [name, service] of Object.entries(services)) {
    for (const [dep, spec] of Object.entries(service.depends_on ?? {})) {
      check(services[dep], `compose: ${name} depends on unknown service ${dep}`);
      check(CONDITIONS.has(spec?.condition), `compose: ${name} -> ${dep} needs a depends_on condition`);
      if (spec?.condition === 'service_healthy') check(services[dep]?.healthcheck?.test, `compose: ${name} waits for ${dep} to be healthy, but ${dep} has no healthcheck`);
    }
  }
  for (const [name, meta] of Object.entries(SERVICES)) {
    const service = services[name];
    if (!service) continue;
    const env = service.environment ?? {};
    check(service.build?.target === name, `compose: ${name} must build the Dockerfile target ${name}`);
    check(/^\$\{NODE_IMAGE:-node:20[^}]*\}$/.test(service.build?.args?.NODE_IMAGE ?? ''), `compose: ${name} must pass the build argument NODE_IMAGE (default node:20...)`);
    check(service.read_only === true, `compose: ${name} must run on a read-only root filesystem`);
    check(JSON.stringify(service.healthcheck?.test ?? '').includes('/readyz'), `compose: ${name} healthcheck must probe /readyz`);
    check(String(env.PORT) === String(meta.port), `compose: ${name} must listen on PORT ${meta.port}`);
    check(String(env.DATABASE_URL ?? '').includes(`billstream_${meta.schema}:`), `compose: ${name} must connect as its own role billstream_${meta.schema}`);
    check(service.depends_on?.postgres?.condition === 'service_healthy', `compose: ${name} must wait for a healthy postgres`);
    check(service.depends_on?.['kafka-init']?.condition === 'service_completed_successfully', `compose: ${name} must wait for the topics (kafka-init)`);
    for (const variable of variables?.[name]?.required ?? []) {
      check(env[variable] !== undefined && env[variable] !== '', `compose: ${name} does not set ${variable}, which it requires`);
    }
    for (const [variable, value] of Object.entries(env)) {
      const url = /^http:\/\/([^:/]+):(\d+)/.exec(String(value));
      if (variable.endsWith('_SERVICE_URL') && check(url, `compose: ${name} ${variable} is not an http URL`)) {
        check(services[url[1]] && String(services[url[1]].environment?.PORT) === url[2], `compose: ${name} ${variable} points at ${url[1]}:${url[2]}, which is not a service port`);
      }
    }
  }
  const gatewayPorts = (services.gateway?.ports ?? []).map(String);
  check(gatewayPorts.some((p) => /^127\.0\.0\.1:8080:8080$/.test(withDefaults(p))), 'compose: gateway must publish port 8080 on 127.0.0.1');
  // Published ports stay on the loopback and off the ports a developer's own Postgres and Kafka use.
  for (const [name, service] of Object.entries(services)) {
    for (const port of (service.ports ?? []).map((p) => withDefaults(p))) {
      check(/^127\.0\.0\.1:/.test(port), `compose: ${name} publishes ${port} beyond the loopback`);
      check(!/^127\.0\.0\.1:(5432|9092|9093):/.test(port), `compose: ${name} publishes ${port}, the port of a local Postgres or Kafka`);
    }
  }
  for (const [name, service] of Object.entries(services)) {
    if (name !== 'gateway' && SERVICES[name]) check(!service.ports, `compose: ${name} must not publish a port (only the gateway is public)`);
  }

  const binary = spawnSync('docker-compose', ['version', '--short'], { encoding: 'utf8' });
  if (binary.status === 0) {
    // The secrets as `npm run compose:env` writes them: compose requires them.
    const secrets = parseEnv(composeEnv(fs.readFileSync(path.join(ROOT, 'deploy', 'compose', 'env.example'), 'utf8')));
    const parsed = spawnSync('docker-compose', ['-f', file, 'config', '-q'], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, ...secrets } });
    check(parsed.status === 0, `compose: docker-compose config failed:\n${parsed.stderr}`);
    console.log(`check-deploy: docker-compose ${binary.stdout.trim()} parsed docker-compose.yml (config -q: ${parsed.status === 0 ? 'ok' : 'failed'})`);
  } else {
    console.log('check-deploy: no docker-compose binary; checked docker-compose.yml with the yaml parser only');
  }
}

/** The Dockerfile: a target per service running its main, production dependencies only, non-root, a HEALTHCHECK. */
function checkDockerfile() {
  const file = path.join(ROOT, 'Dockerfile');
  if (!check(fs.existsSync(file), 'Dockerfile is missing')) return;
  const text = fs.readFileSync(file, 'utf8').replace(/\\\n/g, ' ');
  const stages = new Map();
  let current;
  for (const line of text.split('\n')) {
    const from = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?/i.exec(line);
    if (from) {
      current = { base: from[1], name: from[2], lines: [] };
      if (from[2]) stages.set(from[2], current);
    } else if (current) current.lines.push(line.trim());
  }
  const chain = (name) => {
    const out = [];
    for (let stage = stages.get(name); stage; stage = stages.get(stage.base)) out.push(...stage.lines);
    return out;
  };
  check(/npm ci[^\n]*--omit=dev/.test(text), 'Dockerfile: the runtime dependencies must be installed with npm ci --omit=dev');
  // A `# syntax=` line makes BuildKit pull its frontend from a registry: the build must run without one.
  check(!/^#\s*syntax=/m.test(text), 'Dockerfile: no # syntax= directive (it needs a registry to build)');
  check(!/COPY[^\n]*ca-certificates/.test(text), 'Dockerfile: a CA bundle comes in as a build secret, never COPY');
  for (const name of Object.keys(SERVICES)) {
    if (!check(stages.has(name), `Dockerfile: no target ${name}`)) continue;
    const lines = chain(name);
    check(lines.some((l) => l.startsWith('CMD') && l.includes(`services/${name}/dist/main.js`)), `Dockerfile: target ${name} must run services/${name}/dist/main.js`);
    check(lines.some((l) => /^USER\s+(?!root\b|0\b)\S+/.test(l)), `Dockerfile: target ${name} must run as a non-root USER`);
    check(lines.some((l) => l.startsWith('HEALTHCHECK') && l.includes('/healthz')), `Dockerfile: target ${name} needs a HEALTHCHECK on /healthz`);
    check(lines.some((l) => new RegExp(`^ENV PORT=${SERVICES[name].port}\\b`).test(l)), `Dockerfile: target ${name} must default PORT to ${SERVICES[name].port}`);
  }
  console.log(`check-deploy: Dockerfile: ${stages.size} stages (${[...stages.keys()].join(', ')})`);
}

function containerProblems(where, container) {
  check(container.image, `${where}: no image`);
  check(container.readinessProbe?.httpGet?.path === '/readyz', `${where}: readinessProbe must GET /readyz`);
  check(container.livenessProbe?.httpGet?.path === '/healthz', `${where}: livenessProbe must GET /healthz`);
  check(container.resources?.requests?.cpu && container.resources?.requests?.memory, `${where}: resources.requests.cpu and .memory are required`);
  check(container.securityContext?.allowPrivilegeEscalation === false, `${where}: allowPrivilegeEscalation must be false`);
}

/**
 * The Secrets shipped in deploy/k8s hold placeholders no service starts with (ADR 0034): the
 * internal token and bootstrap key are refused by the config lib, the connection strings are
 * no postgres:// URL. Real ones are created from random values (deploy/k8s/README.md).
 */
function checkShippedSecrets(secrets) {
  const common = path.join(ROOT, 'libs', 'config', 'dist', 'index.js');
  if (!fs.existsSync(common)) return;
  const { commonServiceEnv, isPlaceholderSecret } = require(common);
  const token = secrets.get('billstream-internal')?.INTERNAL_TOKEN;
  check(token !== undefined && !commonServiceEnv.INTERNAL_TOKEN.safeParse(token).success, 'k8s: Secret billstream-internal must ship an INTERNAL_TOKEN no service accepts (a deny-listed placeholder)');
  const key = secrets.get('billstream-bootstrap')?.BOOTSTRAP_API_KEY;
  check(key === undefined || isPlaceholderSecret(key), 'k8s: Secret billstream-bootstrap must ship a deny-listed placeholder BOOTSTRAP_API_KEY');
  for (const [name, data] of secrets) {
    if (data.DATABASE_URL !== undefined) {
      check(!commonServiceEnv.DATABASE_URL.safeParse(data.DATABASE_URL).success, `k8s: Secret ${name} must ship a DATABASE_URL no service accepts (a placeholder, not a postgres:// URL)`);
    }
  }
}

function checkK8s(variables) {
  if (!check(fs.existsSync(K8S_DIR), 'deploy/k8s is missing')) return;
  const files = fs.readdirSync(K8S_DIR).filter((f) => /\.ya?ml$/.test(f));
  const objects = [];
  for (const file of files) {
    for (const doc of parseYaml(`deploy/k8s/${file}`, fs.readFileSync(path.join(K8S_DIR, file), 'utf8'))) {
      if (file.startsWith('kustomization.')) {
        for (const resource of doc.resources ?? []) check(files.includes(resource), `deploy/k8s/${file}: resource ${resource} does not exist`);
        for (const other of files.filter((f) => !f.startsWith('kustomization.'))) {
          check((doc.resources ?? []).includes(other), `deploy/k8s/${file}: ${other} is not listed in resources`);
        }
        continue;
      }
      check(doc.apiVersion && doc.kind && doc.metadata?.name, `deploy/k8s/${file}: every object needs apiVersion, kind and metadata.name`);
      objects.push({ file, ...doc });
    }
  }
  const byKind = (kind) => objects.filter((o) => o.kind === kind);
  const secrets = new Map(byKind('Secret').map((s) => [s.metadata.name, { ...(s.data ?? {}), ...(s.stringData ?? {}) }]));
  const configMaps = new Map(byKind('ConfigMap').map((c) => [c.metadata.name, c.data ?? {}]));
  checkShippedSecrets(secrets);

  for (const [name, meta] of Object.entries(SERVICES)) {
    const deployment = byKind('Deployment').find((d) => d.metadata.name === name);
    const service = byKind('Service').find((s) => s.metadata.name === name);
    const found = [check(deployment, `k8s: Deployment ${name} is missing`), check(service, `k8s: Service ${name} is missing`)];
    if (found.includes(false)) continue;
    const podLabels = deployment.spec?.template?.metadata?.labels ?? {};
    const matches = (selector) => Object.entries(selector ?? {}).every(([k, v]) => podLabels[k] === v) && Object.keys(selector ?? {}).length > 0;
    check(matches(deployment.spec?.selector?.matchLabels), `k8s: Deployment ${name} selector does not match its pod labels`);
    check(matches(service.spec?.selector), `k8s: Service ${name} selector does not match the pods of Deployment ${name}`);
    const pod = deployment.spec?.template?.spec ?? {};
    const containers = pod.containers ?? [];
    check(containers.length > 0, `k8s: Deployment ${name} has no container`);
    check(pod.securityContext?.runAsNonRoot === true, `k8s: Deployment ${name} must run as non-root`);
    for (const container of containers) {
      const where = `k8s: ${name}/${container.name}`;
      containerProblems(where, container);
      const ports = container.ports ?? [];
      check(ports.some((p) => p.containerPort === meta.port), `${where}: must expose port ${meta.port}`);
      for (const port of service.spec?.ports ?? []) {
        check(ports.some((p) => p.name === port.targetPort || p.containerPort === port.targetPort), `k8s: Service ${name} targetPort ${port.targetPort} is no container port`);
      }
      const names = new Set((container.env ?? []).map((e) => e.name));
      for (const from of container.envFrom ?? []) {
        if (from.configMapRef && check(configMaps.has(from.configMapRef.name), `${where}: envFrom ConfigMap ${from.configMapRef.name} does not exist`)) {
          Object.keys(configMaps.get(from.configMapRef.name)).forEach((k) => names.add(k));
        }
        if (from.secretRef && check(secrets.has(from.secretRef.name), `${where}: envFrom Secret ${from.secretRef.name} does not exist`)) {
          Object.keys(secrets.get(from.secretRef.name)).forEach((k) => names.add(k));
        }
      }
      for (const entry of container.env ?? []) {
        const secretRef = entry.valueFrom?.secretKeyRef;
        if (secretRef) {
          check(secrets.get(secretRef.name)?.[secretRef.key] !== undefined, `${where}: ${entry.name} refers to Secret ${secretRef.name} key ${secretRef.key}, which does not exist`);
        }
        const configRef = entry.valueFrom?.configMapKeyRef;
        if (configRef) check(configMaps.get(configRef.name)?.[configRef.key] !== undefined, `${where}: ${entry.name} refers to a missing ConfigMap key`);
      }
      check((container.env ?? []).some((e) => e.name === 'DATABASE_URL' && e.valueFrom?.secretKeyRef), `${where}: DATABASE_URL must come from a Secret`);
      check((container.env ?? []).some((e) => e.name === 'INTERNAL_TOKEN' && e.valueFrom?.secretKeyRef), `${where}: INTERNAL_TOKEN must come from a Secret`);
      for (const variable of variables?.[name]?.required ?? []) {
        check(names.has(variable), `${where}: does not set ${variable}, which the service requires`);
      }
    }
  }
  for (const hpa of byKind('HorizontalPodAutoscaler')) {
    const target = hpa.spec?.scaleTargetRef;
    check(byKind('Deployment').some((d) => d.metadata.name === target?.name), `k8s: HPA ${hpa.metadata.name} scales unknown Deployment ${target?.name}`);
  }
  console.log(`check-deploy: deploy/k8s: ${files.length} files, ${objects.length} objects (${[...new Set(objects.map((o) => o.kind))].join(', ')})`);
}

const variables = serviceVariables();
if (!variables) console.log('check-deploy: libs/config is not built; run "npm run build" to also check each service\'s required variables');
checkDockerfile();
checkCompose(variables);
checkK8s(variables);
if (problems.length > 0) {
  console.error(`check-deploy: ${problems.length} problem(s):\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  process.exit(1);
}
console.log(`check-deploy: ${checks} checks passed`);
