// Prints jest's result file as one closing line: "N passed, N failed, N skipped".
const fs = require('node:fs');

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
const failed = results.numFailedTests + failedSuites.length;
process.stdout.write(`${results.numPassedTests} passed, ${failed} failed, ${results.numPendingTests} skipped\n`);
