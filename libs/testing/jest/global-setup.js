/* Starts what integration and e2e tests need, once per run: Kafka through deploy/kafka when
 * KAFKA_BROKERS is unset (on a free port, in a temporary data dir). Postgres is the local
 * server (DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres); each test file
 * makes a database of its own there. Whole-app stacks (test-e2e/support/stack.ts) clone theirs
 * from a template with every service's migrations applied, made here once per run from the build
 * output (services/standalone/dist/migrate.js); without a build there is no template and they
 * start from an empty database as before. */
const { execFileSync } = require('node:child_process');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const fs = require('node:fs');
const { Client } = require('pg');

function freePortPair() {
  return new Promise((resolve, reject) => {
    const tryOnce = (attempt) => {
      const s = net.createServer();
      s.once('error', reject);
      s.listen(0, '127.0.0.1', () => {
        const port = s.address().port;
        s.close(() => {
          const t = net.createServer();
          t.once('error', () => (attempt < 20 ? tryOnce(attempt + 1) : reject(new Error('no free port pair'))));
          t.listen(port + 1, '127.0.0.1', () => t.close(() => resolve(port)));
        });
      });
    };
    tryOnce(0);
  });
}

/** Makes bst_<run>_template with every service's migrations (global-teardown drops it with the run's other databases). */
async function migratedTemplate() {
  const migrateScript = path.resolve(__dirname, '../../../services/standalone/dist/migrate.js');
  if (!fs.existsSync(migrateScript)) return;
  const name = `bst_${process.env.TEST_RUN_ID}_template`.toLowerCase();
  const client = new Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
  const url = new URL(process.env.DATABASE_URL);
  url.pathname = `/${name}`;
  execFileSync(process.execPath, [migrateScript], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, DATABASE_URL: url.toString(), LOG_LEVEL: 'warn' },
  });
  process.env.BILLSTREAM_TEST_TEMPLATE_DB = name;
}

module.exports = async function globalSetup() {
  if (!process.env.DATABASE_URL) process.env.DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
  if (!process.env.TEST_RUN_ID) process.env.TEST_RUN_ID = `${Date.now().toString(36)}${process.pid.toString(36)}`;
  await migratedTemplate();
  if (process.env.KAFKA_BROKERS) return;
  const port = await freePortPair();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'billstream-test-kafka-'));
  const script = path.resolve(__dirname, '../../../deploy/kafka/kafka.sh');
  execFileSync('bash', [script, 'start'], {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, KAFKA_PORT: String(port), KAFKA_DATA_DIR: dataDir },
  });
  process.env.KAFKA_BROKERS = `127.0.0.1:${port}`;
  process.env.BILLSTREAM_TEST_KAFKA_DATA_DIR = dataDir;
  process.env.BILLSTREAM_TEST_KAFKA_PORT = String(port);
};
