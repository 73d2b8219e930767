/**
 * Import rules that ESLint cannot see file by file (docs/adr/0011-import-rules.md):
 * no module import cycles, type-only imports included, no library importing a service, no
 * service importing another (but standalone, which composes them all), and the layers of the
 * billing service (services/billing/README.md). `npm run lint` runs it after ESLint, through
 * scripts/check-imports.js, which also refuses cycles between packages (tests included).
 */

/**
 * The billing service's folders, bottom up (services/billing/README.md, "Layers"). A folder
 * imports only its own files and the folders of the layers below its own: never a folder of
 * its own layer, never one above, never the composition (src/*.ts: service.ts, main.ts,
 * config.ts, index.ts, src/composition/). Tests (`*.test.ts`) are exempt: they may drive a folder through the
 * harness of src/testing/, which builds the whole service; src/testing/ is for tests only.
 */
const BILLING_SRC = '^services/billing/src/';
const BILLING_LAYERS = [
  ['shared', 'clients', 'periods', 'migrations'],
  ['customers', 'invoice-arithmetic', 'settings', 'taxes'],
  ['prices'],
  ['plans'],
  ['subscriptions'],
  ['features', 'credit-grants', 'coupons'],
  ['entitlements'],
  ['invoices'],
  ['payments'],
  ['credit-notes', 'plan-changes'],
  ['topups', 'renewals', 'unbilled', 'tasks', 'customer-events', 'documents', 'reports'],
  ['communications'],
  ['workflows'],
];
const TEST_FILE = '\\.test\\.ts$';

const billingLayerRules = BILLING_LAYERS.flatMap((layer, level) => {
  const below = BILLING_LAYERS.slice(0, level).flat();
  return layer.map((folder) => ({
    name: `billing-layer-${folder}`,
    severity: 'error',
    comment:
      below.length === 0
        ? `billing/src/${folder}/ is at the bottom: it imports no other folder of billing.`
        : `billing/src/${folder}/ may import only the folders below it: ${below.join(', ')}.`,
    from: { path: `${BILLING_SRC}${folder}/`, pathNot: TEST_FILE },
    to: { path: BILLING_SRC, pathNot: `${BILLING_SRC}(${[folder, ...below].join('|')})/` },
  }));
});

module.exports = {
  forbidden: [
    ...billingLayerRules,
    {
      name: 'billing-invoice-owner',
      severity: 'error',
      comment:
        "Only billing/src/invoices/lifecycle.ts makes an OwnedInvoice, the one value the invoice store's inserts and writes of status and money take (ADR 0062): nothing else imports invoices/owned.ts, tests included.",
      from: { path: BILLING_SRC, pathNot: `${BILLING_SRC}invoices/lifecycle\\.ts$` },
      to: { path: `${BILLING_SRC}invoices/owned\\.ts$` },
    },
    {
      name: 'billing-testing-only-for-tests',
      severity: 'error',
      comment: 'billing/src/testing/ builds the whole service for tests: only tests (and the harness itself) import it.',
      from: { path: BILLING_SRC, pathNot: [TEST_FILE, `${BILLING_SRC}testing/`] },
      to: { path: `${BILLING_SRC}testing/` },
    },
    {
      name: 'no-service-imports-another',
      severity: 'error',
      comment:
        'A service (its tests included) never imports another service: they talk over HTTP and Kafka. services/standalone, which runs them all in one process, is the exception.',
      from: { path: '^services/([^/]+)/', pathNot: '^services/standalone/' },
      to: { path: '^services/', pathNot: '^services/$1/' },
    },
    {
      name: 'no-cycle',
      severity: 'error',
      comment: 'Modules must not import each other in a circle, not even through `import type`.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'libs-not-services',
      severity: 'error',
      comment: 'Libraries are below services: a lib (its tests included) never imports a service.',
      from: { path: '^libs/' },
      to: { path: '^services/' },
    },
    {
      name: 'packages-not-tests-or-apps',
      severity: 'error',
      comment: 'A package (its tests included) never imports test-e2e/, bench/ or scripts/: those use the packages, not the reverse.',
      from: { path: '^(libs|services)/' },
      to: { path: '^(test-e2e|bench|scripts)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|node_modules|\\.data|coverage)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] },
  },
};
