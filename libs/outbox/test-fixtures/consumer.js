/* A consumer process for the outbox crash test: applies each message once through
 * idempotentHandler, slowly, so that the test can SIGKILL it in the middle of a batch.
 * Every delivery (duplicates included) is counted in `seen`; effects go to `applied`. */
const { KafkaBus } = require('@billstream/bus');
const { createDb } = require('@billstream/db');
const { createLogger } = require('@billstream/logger');
const { idempotentHandler } = require('@billstream/outbox');

const { DATABASE_URL, KAFKA_BROKERS, TOPIC_PREFIX, TOPIC, GROUP, SCHEMA, DELAY_MS } = process.env;

async function main() {
  const logger = createLogger({ service: 'test-consumer', level: 'error' });
  const db = createDb({ databaseUrl: DATABASE_URL, schema: SCHEMA, poolMax: 2 });
  const bus = new KafkaBus({ brokers: KAFKA_BROKERS.split(','), clientId: 'test-consumer', logger, topicPrefix: TOPIC_PREFIX, partitions: 1 });
  await bus.start();
  const delay = Number(DELAY_MS ?? 10);
  const applyOnce = idempotentHandler({
    db,
    group: GROUP,
    logger,
    parse: (message) => JSON.parse(message.value),
    handle: async (trx, event) => {
      await trx('applied').insert({ event_id: event.id, seq: event.payload.seq });
      await new Promise((r) => setTimeout(r, delay));
    },
  });
  await bus.subscribe({
    groupId: GROUP,
    topics: [TOPIC],
    handler: async (batch, ctx) => {
      await db('seen').insert(batch.map((m) => ({ message_id: m.headers['message-id'], kafka_offset: m.offset })));
      await applyOnce(batch, ctx);
    },
  });
  process.stdout.write('ready\n');
}

main().catch((err) => {
  process.stderr.write(String(err && err.stack ? err.stack : err));
  process.exit(1);
});
