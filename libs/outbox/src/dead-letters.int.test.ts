import { KafkaBus, type Subscription } from '@billstream/bus';
import type { Db } from '@billstream/db';
import { createTestDatabase, kafkaBrokers, migratedDb, testLogger, uniqueTopicPrefix, waitFor, type TestDatabase } from '@billstream/testing';
import { consumerDeadLettersMigration, idempotentBatchHandler, idempotentHandler, outboxMigration } from './index';

const SCHEMA = 'dead_letter_test';
const TOPIC = 'poison';
const retry = { maxAttempts: 3, firstDelayMs: 50, maxDelayMs: 200 };

/** ADR 0055: a message that keeps failing is set aside with its error; its partition goes on. */
describe('consumer dead letters (real Postgres and Kafka)', () => {
  let database: TestDatabase;
  let db: Db;
  let bus: KafkaBus;
  const subscriptions: Subscription[] = [];
  const prefix = uniqueTopicPrefix('deadletter');

  beforeAll(async () => {
    database = await createTestDatabase();
    db = await migratedDb(database.url, SCHEMA, [
      outboxMigration(SCHEMA),
      consumerDeadLettersMigration(SCHEMA),
      { name: '001_applied', up: (k) => k.schema.withSchema(SCHEMA).createTable('applied', (t) => t.text('group_name').notNullable() && t.text('n').notNullable()) },
    ]);
    // One partition: every message below shares it, in order.
    bus = new KafkaBus({ brokers: kafkaBrokers(), clientId: 'dead-letter-test', logger: testLogger(), topicPrefix: prefix, partitions: 1 });
    await bus.start();
    await bus.ensureTopics([TOPIC]);
  });

  afterAll(async () => {
    for (const s of subscriptions) await s.stop();
    await bus?.stop();
    await db?.destroy();
    await database?.drop();
  });

  const publish = (group: string, values: string[]) =>
    bus.publish(
      TOPIC,
      values.map((v, i) => ({ key: 'same-key', value: v, headers: { 'message-id': `${group}-${i}-${v.slice(0, 20)}`, group } })),
    );
  const applied = async (group: string) => (await db('applied').where({ group_name: group }).orderBy('n')).map((r) => r.n as string);
  const deadLetters = async (group: string) => (await db('consumer_dead_letters').where({ consumer_group: group })).sort((a, b) => Number(a.message_offset) - Number(b.message_offset));

  it('a message whose handling always fails is dead-lettered with its error after its attempts, and the next messages of its partition are handled', async () => {
    const group = 'per-message';
    let poisonTries = 0;
    const handler = idempotentHandler<{ n: string }>({
      db,
      group,
      logger: testLogger(),
      retry,
      parse: (m) => JSON.parse(m.value) as { n: string },
      async handle(trx, { n }, message) {
        if (message.headers.group !== group) return;
        await trx('applied').insert({ group_name: group, n });
        if (n === 'poison') {
          poisonTries += 1;
          throw new Error('the poison message fails every time');
        }
      },
    });
    subscriptions.push(await bus.subscribe({ groupId: group, topics: [TOPIC], handler }));
    await publish(group, ['{"n":"1"}', '{"n":"poison"}', 'not json at all', '{"n":"2"}', '{"n":"3"}']);

    await waitFor(async () => (await applied(group)).includes('3'), { what: 'the messages after the poison one', timeoutMs: 30_000 });
    // The poison message's effects were rolled back each time; the ones after it were applied once.
    expect(await applied(group)).toEqual(['1', '2', '3']);
    expect(poisonTries).toBe(retry.maxAttempts);
    const dead = await deadLetters(group);
    expect(dead.map((d) => ({ value: d.value, error: d.error, attempts: d.attempts, topic: d.topic, partition: d.partition, key: d.message_key }))).toEqual([
      { value: '{"n":"poison"}', error: 'the poison message fails every time', attempts: 3, topic: TOPIC, partition: 0, key: 'same-key' },
      { value: 'not json at all', error: expect.stringMatching(/JSON/), attempts: 1, topic: TOPIC, partition: 0, key: 'same-key' },
    ]);
    expect(dead[0].error_detail).toMatchObject({ name: 'Error', stack: expect.stringContaining('the poison message fails every time') });
    expect(dead[0].headers).toMatchObject({ 'message-id': `${group}-1-{"n":"poison"}` });
    // The offsets after the poison message were committed: the group has nothing left to read.
    await waitFor(async () => (await bus.lag(group, TOPIC)) === 0, { what: 'the group lag to reach 0' });

    // A redelivery (the same messages again) neither applies nor dead-letters anything twice.
    await publish(group, ['{"n":"1"}', '{"n":"poison"}', '{"n":"4"}']);
    await waitFor(async () => (await applied(group)).includes('4'), { what: 'the message after the redelivered poison one' });
    expect(await applied(group)).toEqual(['1', '2', '3', '4']);
    expect(await deadLetters(group)).toHaveLength(2);
    expect(poisonTries).toBe(retry.maxAttempts);
  });

  it('a batch consumer whose batch keeps failing applies its messages one at a time and dead-letters the one that fails alone', async () => {
    const group = 'per-batch';
    const handler = idempotentBatchHandler<{ n: string }, number>({
      db,
      group,
      logger: testLogger(),
      retry,
      parse: (m) => ({ n: m.headers.group === group ? (JSON.parse(m.value) as { n: string }).n : '' }),
      async handle(trx, values) {
        const mine = values.filter((v) => v.n !== '');
        if (mine.length > 0) await trx('applied').insert(mine.map(({ n }) => ({ group_name: group, n })));
        if (mine.some((v) => v.n === 'poison')) throw new Error('a batch with the poison message fails');
        return mine.length;
      },
    });
    subscriptions.push(await bus.subscribe({ groupId: group, topics: [TOPIC], handler }));
    await publish(group, ['{"n":"1"}', '{"n":"poison"}', '{"n":"2"}']);
    await waitFor(async () => (await applied(group)).includes('2'), { what: 'the messages of the failing batch', timeoutMs: 30_000 });
    await publish(group, ['{"n":"3"}']);
    await waitFor(async () => (await applied(group)).includes('3'), { what: 'the next batch' });
    expect(await applied(group)).toEqual(['1', '2', '3']);
    const dead = await deadLetters(group);
    expect(dead.map((d) => ({ value: d.value, error: d.error }))).toEqual([{ value: '{"n":"poison"}', error: 'a batch with the poison message fails' }]);
  });
});
