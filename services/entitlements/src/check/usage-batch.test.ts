import { NotFoundError, ServiceUnavailableError } from '@billstream/errors';
import type { Meters, UsageQuery } from '../upstreams/meters';
import { usageInBatch, type AskedUsage } from './usage-batch';

const scope = { tenantId: 't', environmentId: 'e' };
const ask = (meterId: string, customer: string, requestId = `req-${customer}`): AskedUsage => ({
  query: { meterId, externalCustomerId: customer, from: new Date('2026-11-01T00:00:00Z'), to: new Date('2026-12-01T00:00:00Z'), filterValues: null },
  requestId,
});

/** Meters of a fake aggregator: usage = `<meter>:<customer>`; meter `gone` is unknown, `down` unreachable. */
function fakeMeters() {
  const calls: Array<{ kind: 'one' | 'many'; queries: string[]; requestId: string }> = [];
  const value = (meterId: string, q: UsageQuery) => {
    if (meterId === 'gone') throw new ServiceUnavailableError('The ingestion service could not give the usage; retry later');
    if (meterId === 'down') throw new ServiceUnavailableError('down');
    return `${meterId}:${q.externalCustomerId}`;
  };
  const meters: Meters = {
    usage: async (_s, meterId, q, requestId) => {
      calls.push({ kind: 'one', queries: [`${meterId}:${q.externalCustomerId}`], requestId });
      return value(meterId, q);
    },
    usageMany: async (_s, queries, requestId) => {
      calls.push({ kind: 'many', queries: queries.map((q) => `${q.meterId}:${q.externalCustomerId}`), requestId });
      if (queries.some((q) => q.meterId === 'gone')) throw new NotFoundError('The ingestion service does not know a meter of the batch');
      return queries.map((q) => value(q.meterId, q));
    },
  };
  return { meters, calls };
}

describe('usageInBatch', () => {
  it('one query: the single call, with its own request id', async () => {
    const { meters, calls } = fakeMeters();
    expect(await usageInBatch(meters, scope, [ask('m1', 'a')])).toEqual(['m1:a']);
    expect(calls).toEqual([{ kind: 'one', queries: ['m1:a'], requestId: 'req-a' }]);
  });

  it('several queries: one batch call, values in their order', async () => {
    const { meters, calls } = fakeMeters();
    expect(await usageInBatch(meters, scope, [ask('m1', 'a'), ask('m2', 'b'), ask('m1', 'c')])).toEqual(['m1:a', 'm2:b', 'm1:c']);
    expect(calls).toEqual([{ kind: 'many', queries: ['m1:a', 'm2:b', 'm1:c'], requestId: 'req-a' }]);
  });

  it('a batch refused whole for an unknown meter is asked query by query: only that query fails', async () => {
    const { meters, calls } = fakeMeters();
    const values = await usageInBatch(meters, scope, [ask('m1', 'a'), ask('gone', 'b'), ask('m1', 'c')]);
    expect(await values[0]).toBe('m1:a');
    await expect(values[1]).rejects.toThrow(ServiceUnavailableError);
    expect(await values[2]).toBe('m1:c');
    expect(calls.map((c) => [c.kind, c.queries, c.requestId])).toEqual([
      ['many', ['m1:a', 'gone:b', 'm1:c'], 'req-a'],
      ['one', ['m1:a'], 'req-a'],
      ['one', ['gone:b'], 'req-b'],
      ['one', ['m1:c'], 'req-c'],
    ]);
  });

  it('any other failure of the batch fails it whole, without asking again', async () => {
    const { meters, calls } = fakeMeters();
    await expect(usageInBatch(meters, scope, [ask('m1', 'a'), ask('down', 'b')])).rejects.toThrow('down');
    expect(calls).toHaveLength(1);
  });
});
