import { Kafka } from 'kafkajs';
import { leaveGroupMember } from './leave-group';

/**
 * Which LeaveGroup answers `leaveGroupMember` tries again, gives up on, or takes as "gone".
 * The errors are the ones kafkajs itself builds from a broker's error code, so the names
 * matched are kafkajs's (code 14 is `GROUP_LOAD_IN_PROGRESS` there, not the protocol's
 * `COORDINATOR_LOAD_IN_PROGRESS`: the mismatch left a crashed member in its group after a
 * broker outage, and the new member waited ~6.5 s for its session). Only the cluster's
 * network calls are replaced; the real broker's side is in kafka-bus.int.test.ts and the
 * kafka-outage e2e.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { createErrorFromCode } = require('kafkajs/src/protocol/error') as { createErrorFromCode(code: number): Error & { type: string } };

function kafkaAnswering(answers: Array<number | 'ok'>) {
  const kafka = new Kafka({ brokers: ['127.0.0.1:9'], clientId: 'leave-group-test' });
  const calls: string[] = [];
  const symbol = Object.getOwnPropertySymbols(kafka).find((s) => s.description === 'private:Kafka:createCluster');
  expect(symbol).toBeDefined();
  (kafka as unknown as Record<symbol, unknown>)[symbol!] = () => ({
    connect: async () => undefined,
    disconnect: async () => undefined,
    findGroupCoordinator: async () => ({
      leaveGroup: async ({ memberId }: { groupId: string; memberId: string }) => {
        calls.push(memberId);
        const answer = answers.shift() ?? 'ok';
        if (answer !== 'ok') throw createErrorFromCode(answer);
      },
    }),
  });
  return { kafka, calls };
}

describe('leaveGroupMember', () => {
  it('tries again while the coordinator loads the group (code 14, as kafkajs names it)', async () => {
    expect(createErrorFromCode(14).type).toBe('GROUP_LOAD_IN_PROGRESS');
    const { kafka, calls } = kafkaAnswering([14, 14, 'ok']);
    expect(await leaveGroupMember(kafka, 'g', 'm-1')).toBe('left');
    expect(calls).toEqual(['m-1', 'm-1', 'm-1']);
  });

  it('tries again while the coordinator is not available or has moved (codes 15, 16)', async () => {
    const { kafka, calls } = kafkaAnswering([15, 16, 'ok']);
    expect(await leaveGroupMember(kafka, 'g', 'm-1')).toBe('left');
    expect(calls).toHaveLength(3);
  });

  it('a member the coordinator does not know is gone (code 25)', async () => {
    const { kafka, calls } = kafkaAnswering([25]);
    expect(await leaveGroupMember(kafka, 'g', 'm-1')).toBe('gone');
    expect(calls).toHaveLength(1);
  });

  it('gives up at once on any other error, and on a transient one after the deadline', async () => {
    const refused = kafkaAnswering([30]);
    await expect(leaveGroupMember(refused.kafka, 'g', 'm-1')).rejects.toMatchObject({ type: 'GROUP_AUTHORIZATION_FAILED' });
    expect(refused.calls).toHaveLength(1);
    const loading = kafkaAnswering(Array(100).fill(14));
    await expect(leaveGroupMember(loading.kafka, 'g', 'm-1', 300)).rejects.toMatchObject({ type: 'GROUP_LOAD_IN_PROGRESS' });
    expect(loading.calls.length).toBeGreaterThan(1);
    expect(loading.calls.length).toBeLessThan(10);
  });
});
