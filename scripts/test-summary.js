// Prints jest's result file: the slowest suites (where CI's time goes), then one closing line:
// "N passed, N failed, N skipped".
const fs = require('node:fs');
const path = require('node:path');

const file = process.argv[2];
let results;
try {
  results = JSON.parse(fs.readFileSync(file, 'utf8'));
} catch (err) {
  process.stdout.write(`test summary unavailable (${err.message})\n0 passed, 1 failed\n`);
  process.exit(0);
}
const failedSuites = results.testResults.filter((s) => s.status === 'failed' && s.assertionResults.length === 0);
for (const suite of failedSuites) {
  process.stdout.write(`suite failed to run: ${suite.name}\n${(suite.message || '').slice(0, 2000)}\n`);
}
const timed = results.testResults
  .filter((s) => Number.isFinite(s.startTime) && Number.isFinite(s.endTime))
  .map((s) => ({ name: path.relative(process.cwd(), s.name), seconds: (s.endTime - s.startTime) / 1000 }));
if (timed.length > 0) {
  const total = timed.reduce((sum, s) => sum + s.seconds, 0);
  process.stdout.write(`suites: ${timed.length}, ${total.toFixed(0)} s in all; the slowest:\n`);
  for (const s of [...timed].sort((a, b) => b.seconds - a.seconds).slice(0, 15)) {
    process.stdout.write(`  ${s.seconds.toFixed(1).padStart(7)} s  ${s.name}\n`);
  }
}
const failed = results.numFailedTests + failedSuites.length;
process.stdout.write(`${results.numPassedTests} passed, ${failed} failed, ${results.numPendingTests} skipped\n`);
