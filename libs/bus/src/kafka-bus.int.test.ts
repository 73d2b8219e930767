import { spawn, type ChildProcess } from 'node:child_process';
import { Kafka, logLevel } from 'kafkajs';
import { kafkaBrokers, testLogger, uniqueTopicPrefix, waitFor } from '@billstream/testing';
import { KAFKA_TIMING_DEFAULTS, KafkaBus } from './kafka-bus';
import { leaveGroupMember } from './leave-group';

/**
 * A group member killed with SIGKILL stays registered until its session expires. A new
 * subscriber of that group must not wait for it: subscribe() answers at once and the consumer
 * joins in the background, consuming once the dead member's session is over.
 */
describe('KafkaBus subscribe (real Kafka)', () => {
  const prefix = uniqueTopicPrefix('bus');
  const TOPIC = 'things';
  const GROUP = 'dead-member';
  let bus: KafkaBus;
  let child: ChildProcess | undefined;

  beforeAll(async () => {
    bus = new KafkaBus({ brokers: kafkaBrokers(), clientId: 'bus-test', logger: testLogger(), topicPrefix: prefix, partitions: 2 });
    await bus.start();
    await bus.ensureTopics([TOPIC]);
  });
  afterAll(async () => {
    if (child?.exitCode === null) child.kill('SIGKILL');
    await bus?.stop();
  });

  /** A process whose consumer joins `group` with the bus's session and prints `joined <member id>`; it resolves with its member id. */
  function memberProcess(group: string): Promise<{ proc: ChildProcess; memberId: string }> {
    const script = `
      const { Kafka, logLevel } = require('kafkajs');
      const consumer = new Kafka({ brokers: ${JSON.stringify(kafkaBrokers())}, logLevel: logLevel.NOTHING })
        .consumer({ groupId: ${JSON.stringify(prefix + group)}, sessionTimeout: ${KAFKA_TIMING_DEFAULTS.sessionTimeoutMs}, heartbeatInterval: 1000 });
      consumer.on(consumer.events.GROUP_JOIN, (e) => process.stdout.write('joined ' + e.payload.memberId + '\\n'));
      consumer.connect()
        .then(() => consumer.subscribe({ topics: [${JSON.stringify(prefix + TOPIC)}] }))
        .then(() => consumer.run({ eachMessage: async () => {} }));
    `;
    const proc = spawn(process.execPath, ['-e', script], { cwd: __dirname, stdio: ['ignore', 'pipe', 'inherit'] });
    child = proc;
    return new Promise((resolve, reject) => {
      proc.stdout?.on('data', (chunk: Buffer) => {
        const joined = /joined (\S+)/.exec(chunk.toString());
        if (joined) resolve({ proc, memberId: joined[1] });
      });
      proc.once('exit', (code) => reject(new Error(`member process exited (${code})`)));
    });
  }

  /** Kills the member process with SIGKILL: it leaves nothing, its member stays in the group. */
  async function killMember(proc: ChildProcess): Promise<number> {
    proc.kill('SIGKILL');
    const killedAt = Date.now();
    await new Promise((r) => proc.once('exit', r));
    return killedAt;
  }

  /** Subscribes `group`, publishes three messages and answers when they were handled. */
  async function consumeThree(group: string): Promise<{ subscribeMs: number; handledAt: number; received: string[] }> {
    const received: string[] = [];
    const subscribeStarted = Date.now();
    const subscription = await bus.subscribe({
      groupId: group,
      topics: [TOPIC],
      handler: async (messages) => void received.push(...messages.map((m) => m.value)),
    });
    const subscribeMs = Date.now() - subscribeStarted;
    await bus.publish(TOPIC, [
      { key: 'a', value: `${group}-one` },
      { key: 'b', value: `${group}-two` },
      { key: 'c', value: `${group}-three` },
    ]);
    await waitFor(() => received.filter((v) => v.startsWith(group)).length === 3, { timeoutMs: 30_000, what: 'the messages' });
    const handledAt = Date.now();
    await subscription.stop();
    return { subscribeMs, handledAt, received: received.filter((v) => v.startsWith(group)).sort() };
  }

  it('answers at once although a SIGKILLed member still holds the group, and consumes after its session', async () => {
    const { proc } = await memberProcess(GROUP);
    const killedAt = await killMember(proc);
    const { subscribeMs, handledAt, received } = await consumeThree(GROUP);
    const consumedMs = handledAt - killedAt;
    process.stdout.write(`subscribe answered in ${subscribeMs} ms; consumed ${consumedMs} ms after the kill\n`);

    // Joining waits for the dead member's 6 s session; subscribe does not.
    expect(subscribeMs).toBeLessThan(1000);
    expect(consumedMs).toBeGreaterThanOrEqual(KAFKA_TIMING_DEFAULTS.sessionTimeoutMs - 1000);
    expect(consumedMs).toBeLessThan(10_000);
    expect(received).toEqual([`${GROUP}-one`, `${GROUP}-three`, `${GROUP}-two`]);
  }, 60_000);

  it('removes a dead member by its id (leaveGroupMember), and a new member consumes without waiting for its session', async () => {
    const group = 'removed-member';
    const { proc, memberId } = await memberProcess(group);
    const killedAt = await killMember(proc);
    const kafka = new Kafka({ brokers: kafkaBrokers(), logLevel: logLevel.NOTHING });
    expect(await leaveGroupMember(kafka, prefix + group, memberId)).toBe('left');
    // The coordinator no longer knows it: a second leave finds it gone.
    expect(await leaveGroupMember(kafka, prefix + group, memberId)).toBe('gone');
    const { handledAt, received } = await consumeThree(group);
    const consumedMs = handledAt - killedAt;
    process.stdout.write(`dead member removed: consumed ${consumedMs} ms after the kill\n`);
    expect(consumedMs).toBeLessThan(KAFKA_TIMING_DEFAULTS.sessionTimeoutMs - 1000);
    expect(received).toEqual([`${group}-one`, `${group}-three`, `${group}-two`]);
  }, 60_000);
});

/**
 * Services of one stack create the same topics as they start (a producer and a consumer of a
 * new topic): ensureTopics of several buses at once, on topics that do not exist yet, all
 * resolve, and the topics take messages after (CI once saw a start fail on "does not host this
 * topic-partition" while another service was creating the topic).
 */
describe('KafkaBus ensureTopics from several processes at once (real Kafka)', () => {
  const prefix = uniqueTopicPrefix('bus-topics');
  const buses = Array.from({ length: 4 }, (_, i) => new KafkaBus({ brokers: kafkaBrokers(), clientId: `bus-topics-${i}`, logger: testLogger(), topicPrefix: prefix, partitions: 2 }));

  beforeAll(async () => {
    await Promise.all(buses.map((b) => b.start()));
  });
  afterAll(async () => {
    await Promise.all(buses.map((b) => b.stop()));
  });

  it('creates each topic once, every caller resolves, and the topics take messages', async () => {
    const topics = ['alpha', 'beta', 'gamma'];
    await Promise.all(buses.flatMap((b) => topics.map((t) => b.ensureTopics([t]))));
    for (const [i, t] of topics.entries()) await buses[i].publish(t, [{ key: 'k', value: `v-${t}` }]);
    const consumed: string[] = [];
    const sub = await buses[3].subscribe({
      groupId: 'topics-reader',
      topics,
      handler: async (messages) => {
        consumed.push(...messages.map((m) => m.value));
      },
    });
    try {
      await waitFor(() => consumed.length === 3, { timeoutMs: 30_000, what: 'one message of each topic' });
      expect(consumed.sort()).toEqual(['v-alpha', 'v-beta', 'v-gamma']);
    } finally {
      await sub.stop();
    }
  }, 60_000);
});

/**
 * A group of one process that commits no offsets (every billing replica hearing every
 * usage-recorded notice, ADR 0026): it reads what comes while it runs, tells when it joined,
 * says whether it is consuming, and leaves no offsets behind.
 */
describe('KafkaBus subscription without offsets, its joins and its consuming state (real Kafka)', () => {
  const prefix = uniqueTopicPrefix('bus-ephemeral');
  let bus: KafkaBus;

  beforeAll(async () => {
    bus = new KafkaBus({ brokers: kafkaBrokers(), clientId: 'bus-ephemeral', logger: testLogger(), topicPrefix: prefix, partitions: 2 });
    await bus.start();
    await bus.ensureTopics(['notices']);
  });
  afterAll(async () => {
    await bus?.stop();
  });

  it('reads from its start on, commits nothing, calls onJoin per join, and is consuming only while joined and fetching', async () => {
    await bus.publish('notices', [{ key: 'a', value: 'before' }]);
    const got: string[] = [];
    let joins = 0;
    const sub = await bus.subscribe({
      groupId: 'ephemeral',
      topics: ['notices'],
      fromBeginning: false,
      commitOffsets: false,
      onJoin: () => {
        joins += 1;
      },
      handler: async (messages) => {
        got.push(...messages.map((m) => m.value));
      },
    });
    try {
      expect(sub.consuming().consuming).toBe(false);
      await waitFor(() => sub.consuming().consuming, { timeoutMs: 30_000, what: 'consuming' });
      expect(joins).toBe(1);
      const session = sub.consuming().session;
      expect(session).toBeGreaterThanOrEqual(1);
      for (const key of ['a', 'b', 'c', 'd']) await bus.publish('notices', [{ key, value: `after-${key}` }]);
      await waitFor(() => got.length === 4, { timeoutMs: 30_000, what: 'the four messages sent after joining' });
      expect(got.sort()).toEqual(['after-a', 'after-b', 'after-c', 'after-d']);
      // Idle, it keeps fetching (about every 100 ms): still consuming.
      await new Promise((r) => setTimeout(r, 1500));
      expect(sub.consuming().consuming).toBe(true);
      expect(sub.consuming().session).toBeGreaterThanOrEqual(session);
      // Nothing committed: the group's lag is every message of the topic.
      expect(await bus.lag('ephemeral', 'notices')).toBe(5);
    } finally {
      await sub.stop();
    }
    expect(sub.consuming().consuming).toBe(false);
  }, 60_000);
});
