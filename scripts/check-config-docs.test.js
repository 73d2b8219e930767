const fs = require('node:fs');
const path = require('node:path');
const { configDocProblems, loadSchemas } = require('./check-config-docs');

const ROOT = path.resolve(__dirname, '..');
const read = (file) => fs.readFileSync(path.join(ROOT, file), 'utf8');

const SERVICES = ['gateway', 'customer', 'wallet', 'ingestion-aggregator', 'webhook-dispatcher', 'billing', 'entitlements'];
const operations = (rows, paragraph = 'The embedded default (`npm start`) reads `DATA_DIR`.') =>
  ['## Configuration', '', '| variable | services | default | meaning |', '|---|---|---|---|', ...rows, '', paragraph, ''].join('\n');
const readme = (rows) => ['## Configuration', '', '| variable | default | used by | meaning |', '|---|---|---|---|', ...rows, ''].join('\n');

/** A small world: every service reads PORT; billing reads BILLING_INTERVAL_MS and a URL; npm start reads PORT and DATA_DIR. */
function world(overrides = {}) {
  return {
    operations: operations([
      '| `PORT` | all | 8080 | port |',
      '| `CUSTOMER_SERVICE_URL` | billing | required | where |',
      '| `BILLING_INTERVAL_MS` | billing | 60000 | period job |',
    ]),
    readme: readme(['| `PORT` | 8080 | all | port |', '| `DATA_DIR` | .data | npm start | data |']),
    schemas: Object.fromEntries(SERVICES.map((s) => [s, s === 'billing' ? ['PORT', 'CUSTOMER_SERVICE_URL', 'BILLING_INTERVAL_MS'] : ['PORT']])),
    common: ['PORT'],
    standalone: { own: ['PORT', 'DATA_DIR'], services: { billing: ['BILLING_INTERVAL_MS'] } },
    outside: {},
    ...overrides,
  };
}

describe('check-config-docs', () => {
  it('finds nothing wrong with this repository: docs/operations.md, README.md, the schemas and npm start agree', () => {
    expect(configDocProblems({ operations: read('docs/operations.md'), readme: read('README.md'), ...loadSchemas() })).toEqual([]);
  });

  it('finds nothing wrong in a world that agrees', () => {
    expect(configDocProblems(world())).toEqual([]);
  });

  it('names a schema key the docs do not document for that service', () => {
    const w = world();
    w.schemas.billing.push('UNBILLED_SWEEP_MS');
    w.standalone.services.billing.push('UNBILLED_SWEEP_MS');
    expect(configDocProblems(w)).toEqual(['billing reads UNBILLED_SWEEP_MS, which docs/operations.md does not document for it']);
  });

  it('names a documented variable no schema of that service has', () => {
    const w = world();
    w.schemas.billing = w.schemas.billing.filter((n) => n !== 'BILLING_INTERVAL_MS');
    expect(configDocProblems(w)).toEqual(['docs/operations.md documents BILLING_INTERVAL_MS for billing, whose config schema has no such variable']);
  });

  it('names a service variable the embedded default does not read, but not the addresses it sets itself', () => {
    const w = world({ standalone: { own: ['PORT', 'DATA_DIR'], services: { billing: [] } } });
    expect(configDocProblems(w)).toEqual([
      'BILLING_INTERVAL_MS (billing): the embedded default (npm start) does not read it; add it to its schema or the service\'s settings',
    ]);
  });

  it('checks the paragraph on npm start both ways', () => {
    const w = world({ operations: world().operations.replace('reads `DATA_DIR`.', 'reads `TASKS_*`.') });
    expect(configDocProblems(w)).toEqual([
      'npm start reads DATA_DIR, which docs/operations.md documents neither in the table nor in its paragraph',
      'docs/operations.md says npm start reads TASKS_*, which it does not',
    ]);
  });

  it("checks README's table: where each variable is used, and that every common one is there", () => {
    const w = world({ readme: readme(['| `DATA_DIR` | .data | npm start | data |', '| `BILLING_INTERVAL_MS` | 60000 | gateway | wrong |']) });
    expect(configDocProblems(w)).toEqual([
      'README.md documents BILLING_INTERVAL_MS for gateway, which does not read it',
      "README.md's configuration table lacks PORT, which every service reads",
    ]);
  });

  it('accepts variables read outside the schemas only where the named file reads them', () => {
    const rows = ['| `PORT` | all | 8080 | port |', '| `CUSTOMER_SERVICE_URL` | billing | required | where |', '| `BILLING_INTERVAL_MS` | billing | 60000 | job |', '| `OTEL_SDK_DISABLED` | all | false | off |'];
    expect(configDocProblems(world({ operations: operations(rows), outside: { OTEL_SDK_DISABLED: true } }))).toEqual([]);
    expect(configDocProblems(world({ operations: operations(rows), outside: { OTEL_SDK_DISABLED: false } }))).toHaveLength(SERVICES.length);
  });
});
