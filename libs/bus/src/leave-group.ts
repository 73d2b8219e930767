import type { Kafka } from 'kafkajs';

/**
 * The parts of kafkajs's (private) cluster that a LeaveGroup by member id needs. kafkajs 2.2.4
 * (its last release) has no public call to remove a member that is not its own.
 */
interface KafkajsCluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  findGroupCoordinator(args: { groupId: string }): Promise<{ leaveGroup(args: { groupId: string; memberId: string }): Promise<unknown> }>;
}

const CREATE_CLUSTER = 'private:Kafka:createCluster';

/** Errors that mean the member is not in the group (any more): nothing to leave. */
const GONE = new Set(['UNKNOWN_MEMBER_ID']);
/**
 * Errors worth another try: the coordinator is loading or moving (a broker just came back).
 * kafkajs's names for codes 14-16 (`GROUP_LOAD_IN_PROGRESS`, ...), and the protocol's.
 */
const TRANSIENT = new Set([
  'GROUP_LOAD_IN_PROGRESS',
  'COORDINATOR_LOAD_IN_PROGRESS',
  'GROUP_COORDINATOR_NOT_AVAILABLE',
  'COORDINATOR_NOT_AVAILABLE',
  'NOT_COORDINATOR_FOR_GROUP',
  'NOT_COORDINATOR',
]);

export type LeaveOutcome = 'left' | 'gone';

/**
 * Removes `memberId` from consumer group `groupId`, as the member itself would on a clean
 * stop. For a member of this process that died without leaving (a kafkajs consumer that
 * crashed while the broker was down tried to leave and could not): a new member that joins
 * while the dead one is still listed waits for the dead one's session to expire, which the
 * coordinator counts from the moment it (re)loaded the group, so after a broker outage the
 * group consumed nothing for one session timeout or more after the broker was back.
 *
 * Tries again on a coordinator that is loading or moving until `deadlineMs` has passed;
 * answers `gone` when the coordinator no longer knows the member.
 */
export async function leaveGroupMember(kafka: Kafka, groupId: string, memberId: string, deadlineMs = 5000): Promise<LeaveOutcome> {
  const symbol = Object.getOwnPropertySymbols(kafka).find((s) => s.description === CREATE_CLUSTER);
  const create = symbol ? (kafka as unknown as Record<symbol, unknown>)[symbol] : undefined;
  if (typeof create !== 'function') throw new Error('kafkajs has no private createCluster (a kafkajs upgrade changed its internals)');
  const cluster = (create as (options: object) => KafkajsCluster)({});
  const until = Date.now() + deadlineMs;
  await cluster.connect();
  try {
    for (let attempt = 0; ; attempt += 1) {
      try {
        const coordinator = await cluster.findGroupCoordinator({ groupId });
        await coordinator.leaveGroup({ groupId, memberId });
        return 'left';
      } catch (err) {
        const type = (err as { type?: string }).type ?? '';
        if (GONE.has(type)) return 'gone';
        if (!TRANSIENT.has(type) || Date.now() >= until) throw err;
        await new Promise((r) => setTimeout(r, Math.min(500, 50 * 2 ** attempt)));
      }
    }
  } finally {
    await cluster.disconnect().catch(() => undefined);
  }
}
