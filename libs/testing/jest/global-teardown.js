/* Stops what global-setup started and drops the databases this run made. */
const { execFileSync } = require('node:child_process');
const path = require('node:path');
const { Client } = require('pg');

module.exports = async function globalTeardown() {
  const runId = process.env.TEST_RUN_ID;
  if (runId && process.env.DATABASE_URL) {
    const client = new Client({ connectionString: process.env.DATABASE_URL });
    try {
      await client.connect();
      const { rows } = await client.query('SELECT datname FROM pg_database WHERE datname LIKE $1', [`bst_${runId}_%`]);
      for (const { datname } of rows) {
        await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
      }
    } finally {
      await client.end().catch(() => undefined);
    }
  }
  const dataDir = process.env.BILLSTREAM_TEST_KAFKA_DATA_DIR;
  if (dataDir) {
    const script = path.resolve(__dirname, '../../../deploy/kafka/kafka.sh');
    execFileSync('bash', [script, 'stop', '--clean'], {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, KAFKA_PORT: process.env.BILLSTREAM_TEST_KAFKA_PORT, KAFKA_DATA_DIR: dataDir },
    });
    delete process.env.BILLSTREAM_TEST_KAFKA_DATA_DIR;
  }
};
