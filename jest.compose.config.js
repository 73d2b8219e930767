/**
 * The smoke suite of the docker-compose stack (deploy/compose/ci.sh): runs against a stack that is
 * already up at BASE_URL (default http://127.0.0.1:8080) with BILLSTREAM_API_KEY. Not a project
 * of jest.config.js: `npm test` starts its own stacks and never runs it.
 *
 *   BASE_URL=http://127.0.0.1:8080 BILLSTREAM_API_KEY=... npx jest -c jest.compose.config.js
 */
const base = require('./jest.config.js');
const unit = base.projects.find((p) => p.displayName === 'unit');

module.exports = {
  rootDir: __dirname,
  testEnvironment: 'node',
  transform: unit.transform,
  moduleNameMapper: unit.moduleNameMapper,
  moduleFileExtensions: unit.moduleFileExtensions,
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  testMatch: ['<rootDir>/test-e2e/compose/**/*.smoke.test.ts'],
  testTimeout: 60_000,
  maxWorkers: 1,
};
