#!/usr/bin/env node
/**
 * The import rules of `npm run lint` beyond ESLint (docs/adr/0011-import-rules.md): runs
 * dependency-cruiser with .dependency-cruiser.cjs over every TypeScript and JavaScript
 * folder (module cycles, type-only imports included; no lib importing a service; no package
 * importing test-e2e/bench/scripts), then refuses cycles between packages, tests included.
 * Exits 1 on any violation.
 */
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { packageCycles } = require('./package-cycles');

const ROOT = path.resolve(__dirname, '..');
const FOLDERS = ['libs', 'services', 'test-e2e', 'bench', 'scripts'];

async function main() {
  const bin = path.join(ROOT, 'node_modules', '.bin', 'depcruise');
  const run = spawnSync(bin, [...FOLDERS, '--config', '.dependency-cruiser.cjs', '--output-type', 'json'], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  if (run.error || !run.stdout) {
    process.stderr.write(run.stderr || String(run.error));
    process.exit(2);
  }
  const result = JSON.parse(run.stdout);
  const { format } = await import('dependency-cruiser');
  const report = await format(result, { outputType: 'err' });
  process.stdout.write(report.output);

  const cycles = packageCycles(result.modules);
  for (const cycle of cycles) {
    process.stdout.write(`  error no-package-cycle: ${cycle.path.join(' → ')}\n`);
  }
  if (cycles.length > 0) process.stdout.write(`\nx ${cycles.length} package cycle(s): a package, its tests included, must not depend on itself\n`);
  process.exit(result.summary.error > 0 || cycles.length > 0 ? 1 : 0);
}

main().catch((err) => {
  process.stderr.write(`${err.stack ?? err}\n`);
  process.exit(2);
});
