/**
 * The import rules of `npm run lint` bite: dependency-cruiser with .dependency-cruiser.cjs over
 * a small tree of billing folders and services (the billing layers, src/testing/ for tests only,
 * no service importing another), and ESLint with eslint.config.mjs on imports of another
 * service by its package name. Both run as `npm run lint` runs them, in child processes.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const ROOT = path.resolve(__dirname, '..');
const BIN = path.join(ROOT, 'node_modules', '.bin');

/** The files of the tree: path -> the relative imports it makes. */
const TREE = {
  'services/billing/src/service.ts': ['./payments/service'],
  'services/billing/src/periods/index.ts': [],
  'services/billing/src/prices/domain.ts': ['../periods'],
  'services/billing/src/prices/service.ts': ['./domain', '../plans/store'], // up: plans is above prices
  'services/billing/src/plans/store.ts': ['../prices/domain'],
  'services/billing/src/invoices/store.ts': ['../prices/domain', './lifecycle'],
  'services/billing/src/invoices/owned.ts': [],
  'services/billing/src/invoices/lifecycle.ts': ['./owned'],
  'services/billing/src/payments/service.ts': ['./store', '../invoices/finalizer', '../invoices/owned'], // mints an owned invoice: only lifecycle may
  'services/billing/src/invoices/finalizer.ts': ['./store', '../payments/store'], // up: payments is above invoices
  'services/billing/src/payments/store.ts': ['../invoices/store'],
  'services/billing/src/topups/consumer.ts': ['../renewals/period-job', '../invoices/store'], // sideways: renewals is a sibling
  'services/billing/src/renewals/period-job.ts': ['../invoices/store', '../service'], // up: the composition
  'services/billing/src/unbilled/store.ts': ['../testing/harness'], // the harness outside a test
  'services/billing/src/testing/harness.ts': ['../service'],
  'services/billing/src/invoices/store.int.test.ts': ['./store', '../testing/harness', '../payments/store'], // a test: exempt from the layers
  'services/wallet/src/service.ts': ['../../billing/src/service'], // another service
  'services/standalone/src/main.ts': ['../../billing/src/service', '../../wallet/src/service'],
};

function cruise() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'import-rules-'));
  try {
    for (const [file, imports] of Object.entries(TREE)) {
      fs.mkdirSync(path.join(dir, path.dirname(file)), { recursive: true });
      const lines = imports.map((spec, i) => `import * as m${i} from '${spec}';\nexport const u${i} = m${i};`);
      fs.writeFileSync(path.join(dir, file), `${lines.join('\n')}\nexport const here = 1;\n`);
    }
    fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'commonjs', strict: true } }));
    const run = spawnSync(path.join(BIN, 'depcruise'), ['services', '--config', path.join(ROOT, '.dependency-cruiser.cjs'), '--output-type', 'json'], {
      cwd: dir,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    if (!run.stdout) throw new Error(run.stderr || String(run.error));
    return JSON.parse(run.stdout)
      .summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`)
      .sort();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function eslint(filePath, code) {
  const run = spawnSync(path.join(BIN, 'eslint'), ['--stdin', '--stdin-filename', filePath, '--format', 'json'], { cwd: ROOT, input: code, encoding: 'utf8' });
  return JSON.parse(run.stdout)[0].messages.map((m) => m.ruleId);
}

describe('import rules (npm run lint)', () => {
  it('dependency-cruiser refuses upward and sideways imports of billing folders, an owned invoice made outside lifecycle.ts, the harness outside tests, and a service importing another', () => {
    expect(cruise()).toEqual(
      [
        'billing-invoice-owner: services/billing/src/payments/service.ts -> services/billing/src/invoices/owned.ts',
        'billing-layer-invoices: services/billing/src/invoices/finalizer.ts -> services/billing/src/payments/store.ts',
        'billing-layer-prices: services/billing/src/prices/service.ts -> services/billing/src/plans/store.ts',
        'billing-layer-renewals: services/billing/src/renewals/period-job.ts -> services/billing/src/service.ts',
        'billing-layer-topups: services/billing/src/topups/consumer.ts -> services/billing/src/renewals/period-job.ts',
        'billing-layer-unbilled: services/billing/src/unbilled/store.ts -> services/billing/src/testing/harness.ts',
        'billing-testing-only-for-tests: services/billing/src/unbilled/store.ts -> services/billing/src/testing/harness.ts',
        'no-service-imports-another: services/wallet/src/service.ts -> services/billing/src/service.ts',
      ].sort(),
    );
  }, 60_000);

  it('ESLint refuses a service importing another by its package name, but standalone and test-e2e may', () => {
    const code = "import { createBillingService } from '@billstream/billing';\nexport const x = createBillingService;\n";
    expect(eslint('services/wallet/src/bad.ts', code)).toEqual(['no-restricted-imports']);
    expect(eslint('services/billing/src/bad.ts', "import { createWalletService } from '@billstream/wallet';\nexport const x = createWalletService;\n")).toEqual(['no-restricted-imports']);
    expect(eslint('services/standalone/src/ok.ts', code)).toEqual([]);
    expect(eslint('test-e2e/ok.ts', code)).toEqual([]);
    expect(eslint('services/billing/src/ok.ts', code)).toEqual([]);
  }, 60_000);
});
