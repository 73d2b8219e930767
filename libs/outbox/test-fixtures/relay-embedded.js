/* The outbox relay of one "service" (schema producer) publishing through the in-process bus
 * to the idempotent consumer of another (schema consumer), both on one embedded database in
 * DATA_DIR; prints what happened as JSON for relay-embedded.int.test.ts (PGlite cannot run
 * inside Jest's module sandbox). */
const { InProcessBus } = require('@billstream/bus');
const { migrate, openServiceDatabases } = require('@billstream/db');
const { createLogger } = require('@billstream/logger');
const { idempotentHandler, newDomainEvent, outboxMigration, OutboxRelay, writeOutbox } = require('@billstream/outbox');

const ctx = { tenantId: 't1', environmentId: 'production', actor: 'test' };
const count = async (query) => Number((await query.count({ n: '*' }))[0].n);

async function main() {
  const logger = createLogger({ service: 'relay-embedded', level: 'error' });
  const databases = await openServiceDatabases({ dataDir: process.env.DATA_DIR });
  const bus = new InProcessBus();
  try {
    const producer = databases.forSchema('producer');
    const consumer = databases.forSchema('consumer');
    await migrate(producer, 'producer', [outboxMigration('producer')]);
    await migrate(consumer, 'consumer', [
      outboxMigration('consumer'),
      { name: '001_applied', up: (db) => db.schema.withSchema('consumer').createTable('applied', (t) => t.text('event_id').primary()) },
    ]);
    // The other service's consumer writes to its own schema in a transaction of its own,
    // while the relay's publish waits for it.
    await bus.subscribe({
      groupId: 'consumer',
      topics: ['things'],
      handler: idempotentHandler({
        db: consumer,
        group: 'consumer',
        logger,
        parse: (m) => JSON.parse(m.value),
        handle: async (trx, event) => {
          await trx('applied').insert({ event_id: event.id });
        },
      }),
    });
    const written = [];
    for (let i = 0; i < 20; i += 1) {
      const event = newDomainEvent('thing.created', ctx, { seq: i });
      written.push(event.id);
      await producer.transaction((trx) => writeOutbox(trx, 'things', `thing_${i}`, event));
    }
    const relay = new OutboxRelay({ db: producer, schema: 'producer', bus, logger, batchSize: 8 });
    // Rounds asked for at once still run one after the other.
    const published = await Promise.all([relay.runOnce(), relay.runOnce(), relay.runOnce(), relay.runOnce()]);
    process.stdout.write(
      JSON.stringify({
        published,
        written: written.sort(),
        applied: (await consumer('applied').pluck('event_id')).sort(),
        unpublished: await count(producer('outbox').whereNull('published_at')),
        processed: await count(consumer('processed_messages')),
      }),
    );
  } finally {
    await bus.stop();
    await databases.close();
  }
}

main().catch((err) => {
  process.stderr.write(`${err.stack || err}\n`);
  process.exit(1);
});
