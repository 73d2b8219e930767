#!/usr/bin/env node
/**
 * The documented variables and the config schemas agree, both ways (`npm run check:deploy`,
 * ADR 0034):
 *
 * - docs/operations.md, "Configuration" table: every variable documented for a service (column
 *   "services": a name, `all` or `any service`) is a key of that service's zod schema (common
 *   variables, metrics, PORT and its own `<service>Env`), or one of the few read outside the
 *   schemas (OUTSIDE_SCHEMAS: the OpenTelemetry SDK's, test switches), and every key of each
 *   schema is documented for that service.
 * - The embedded default (`npm start`) honours every variable documented for a service, except
 *   what it sets itself (service addresses, INTERNAL_TOKEN): its own schema and the settings
 *   schema of each service it composes. Its own variables are documented in the table or in the
 *   paragraph "The embedded default (`npm start`) reads ...", and every name that paragraph
 *   gives is honoured.
 * - README.md's configuration table: each variable exists where its "used by" column says, and
 *   every common variable (all services) is there.
 *
 * Reads the schemas from the built packages: run `npm run build` first (CI does).
 */
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const SERVICES = ['gateway', 'customer', 'wallet', 'ingestion-aggregator', 'webhook-dispatcher', 'billing', 'entitlements'];
/** Each service's own schema shape, exported by its package. */
const SERVICE_ENV_EXPORT = {
  gateway: 'gatewayEnv',
  customer: 'customerEnv',
  wallet: 'walletEnv',
  'ingestion-aggregator': 'ingestionEnv',
  'webhook-dispatcher': 'webhookEnv',
  billing: 'billingEnv',
  entitlements: 'entitlementsEnv',
};
/** Variables read outside the zod schemas, and the file that reads them (or the prefix it names). */
const OUTSIDE_SCHEMAS = {
  OTEL_TRACES_EXPORTER: 'libs/observability/src/tracing.ts',
  OTEL_EXPORTER_OTLP_ENDPOINT: 'libs/observability/src/tracing.ts',
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'libs/observability/src/tracing.ts',
  OTEL_EXPORTER_OTLP_HEADERS: 'libs/observability/src/tracing.ts',
  OTEL_SERVICE_NAME: 'libs/observability/src/tracing.ts',
  OTEL_SDK_DISABLED: 'libs/observability/src/tracing.ts',
  BILLSTREAM_FAILPOINTS: 'libs/runtime/src/failpoints.ts',
  EXIT_WITH_PARENT: 'libs/http/src/server.ts',
};
/** What the embedded default sets itself instead of reading it. */
const SET_BY_EMBEDDED = (name) => name === 'INTERNAL_TOKEN' || name.endsWith('_SERVICE_URL');
const VARIABLE = /`([A-Z][A-Z0-9_]*\*?)`/g;

/** Rows of the first markdown table after the line `heading`: arrays of cell texts. */
function tableAfter(markdown, heading) {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => l.trim() === heading);
  if (start < 0) throw new Error(`no "${heading}" heading`);
  const rows = [];
  let inTable = false;
  for (const line of lines.slice(start + 1)) {
    if (line.startsWith('|')) {
      inTable = true;
      rows.push(line.split('|').slice(1, -1).map((c) => c.trim()));
    } else if (inTable) break;
  }
  return rows.slice(2);
}

const namesIn = (text) => [...text.matchAll(VARIABLE)].map((m) => m[1]);

/** docs/operations.md's configuration table: [{ names, services }] with `all` expanded. */
function operationsTable(markdown) {
  return tableAfter(markdown, '## Configuration').map(([variables, services]) => ({
    names: namesIn(variables),
    services: /^(all|any service)$/.test(services) ? [...SERVICES] : services.split(',').map((s) => s.trim()),
  }));
}

/** The names (and `PREFIX_*` patterns) of the paragraph about the embedded default's variables. */
function embeddedParagraph(markdown) {
  const start = markdown.indexOf('The embedded default (`npm start`) reads');
  if (start < 0) throw new Error('no paragraph "The embedded default (`npm start`) reads ..."');
  const end = markdown.indexOf('\n\n', start);
  return namesIn(markdown.slice(start, end < 0 ? undefined : end));
}

/** README.md's configuration table: [{ names, usedBy }]. */
function readmeTable(markdown) {
  return tableAfter(markdown, '## Configuration').map(([variables, , usedBy]) => ({ names: namesIn(variables), usedBy }));
}

const matches = (pattern, name) => (pattern.endsWith('*') ? name.startsWith(pattern.slice(0, -1)) : pattern === name);

/**
 * The disagreements, as sentences. `schemas`: service -> its variable names; `common`: the
 * names every service reads; `standalone`: { own, services: service -> names };
 * `outside`: name -> whether the file said to read it does.
 */
function configDocProblems({ operations, readme, schemas, common, standalone, outside }) {
  const problems = [];
  const table = operationsTable(operations);
  const documented = new Map(SERVICES.map((s) => [s, new Set()]));
  for (const row of table) {
    for (const service of row.services) {
      if (!documented.has(service)) {
        problems.push(`docs/operations.md: ${row.names.join(', ')}: unknown service "${service}"`);
        continue;
      }
      for (const name of row.names) documented.get(service).add(name);
    }
  }
  const honouredByEmbedded = new Set([...standalone.own, ...Object.values(standalone.services).flat()]);
  for (const service of SERVICES) {
    const schema = new Set(schemas[service]);
    for (const name of documented.get(service)) {
      if (name in outside) {
        if (!outside[name]) problems.push(`${name}: documented as read by ${OUTSIDE_SCHEMAS[name]}, which does not name it`);
      } else if (!schema.has(name)) {
        problems.push(`docs/operations.md documents ${name} for ${service}, whose config schema has no such variable`);
      } else if (!SET_BY_EMBEDDED(name) && !honouredByEmbedded.has(name)) {
        problems.push(`${name} (${service}): the embedded default (npm start) does not read it; add it to its schema or the service's settings`);
      }
    }
    for (const name of schema) {
      if (!documented.get(service).has(name)) problems.push(`${service} reads ${name}, which docs/operations.md does not document for it`);
    }
  }
  const paragraph = embeddedParagraph(operations);
  const tableNames = new Set(table.flatMap((r) => r.names));
  for (const name of standalone.own) {
    if (!tableNames.has(name) && !paragraph.some((p) => matches(p, name))) {
      problems.push(`npm start reads ${name}, which docs/operations.md documents neither in the table nor in its paragraph`);
    }
  }
  for (const pattern of paragraph) {
    if (![...honouredByEmbedded].some((name) => matches(pattern, name))) {
      problems.push(`docs/operations.md says npm start reads ${pattern}, which it does not`);
    }
  }

  const readmeNames = new Set();
  for (const row of readmeTable(readme)) {
    for (const name of row.names) {
      readmeNames.add(name);
      if (name in outside) continue;
      const where =
        row.usedBy === 'npm start' ? [['npm start', standalone.own]]
        : row.usedBy === 'services' ? SERVICES.map((s) => [s, schemas[s]])
        : row.usedBy === 'all' ? [...SERVICES.map((s) => [s, schemas[s]]), ['npm start', [...honouredByEmbedded]]]
        : SERVICES.includes(row.usedBy) ? [[row.usedBy, schemas[row.usedBy]]]
        : undefined;
      if (!where) {
        problems.push(`README.md: ${name}: unknown "used by" ${row.usedBy}`);
        continue;
      }
      for (const [who, names] of where) {
        if (!names.includes(name)) problems.push(`README.md documents ${name} for ${who}, which does not read it`);
      }
    }
  }
  for (const name of common) {
    if (!readmeNames.has(name)) problems.push(`README.md's configuration table lacks ${name}, which every service reads`);
  }
  return problems;
}

/** The schemas of the built packages (or, in a test, of the sources jest maps them to). */
function loadSchemas(load = require) {
  const { commonServiceEnv } = load('@billstream/config');
  const { metricsEnv } = load('@billstream/runtime');
  const common = [...Object.keys(commonServiceEnv), ...Object.keys(metricsEnv), 'PORT'];
  const schemas = {};
  for (const service of SERVICES) {
    const own = load(`@billstream/${service}`)[SERVICE_ENV_EXPORT[service]];
    if (!own) throw new Error(`@billstream/${service} does not export ${SERVICE_ENV_EXPORT[service]}`);
    schemas[service] = [...common, ...Object.keys(own)];
  }
  const { standaloneEnv, embeddedServiceSettings } = load('@billstream/standalone');
  const standalone = {
    own: Object.keys(standaloneEnv),
    services: Object.fromEntries(Object.entries(embeddedServiceSettings).map(([s, shape]) => [s, Object.keys(shape)])),
  };
  const outside = Object.fromEntries(
    Object.entries(OUTSIDE_SCHEMAS).map(([name, file]) => {
      const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
      return [name, text.includes(name) || (name.startsWith('OTEL_EXPORTER_OTLP_') && text.includes('OTEL_EXPORTER_OTLP_*'))];
    }),
  );
  return { schemas, common, standalone, outside };
}

function main() {
  let loaded;
  try {
    loaded = loadSchemas();
  } catch (err) {
    console.error(`check-config-docs: cannot load the config schemas (${err.message}); run "npm run build" first`);
    process.exit(1);
  }
  const problems = configDocProblems({
    operations: fs.readFileSync(path.join(ROOT, 'docs', 'operations.md'), 'utf8'),
    readme: fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8'),
    ...loaded,
  });
  if (problems.length > 0) {
    console.error(`check-config-docs: ${problems.length} disagreement(s) between the docs and the config schemas:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    process.exit(1);
  }
  const count = new Set(Object.values(loaded.schemas).flat()).size;
  console.log(`check-config-docs: ${count} variables of ${SERVICES.length} services and npm start agree with docs/operations.md and README.md`);
}

if (require.main === module) main();

module.exports = { configDocProblems, loadSchemas, operationsTable, readmeTable, embeddedParagraph, OUTSIDE_SCHEMAS };
