import { InProcessBus, TOPICS } from '@billstream/bus';
import { testLogger } from '@billstream/testing';
import { AccessCache } from './access-cache';
import { REFRESH_GATHER_MS, USAGE_TTL_MS, USAGE_TTL_NOTIFIED_MS } from './access-cache-timing';
import { USAGE_NOTICE_LATE_MS, UsageNotices } from './usage-notices';

const scope = { tenantId: 't', environmentId: 'e' };

describe('UsageNotices (ADR 0026)', () => {
  let now: number;
  let bus: InProcessBus;
  let cache: AccessCache;
  let notices: UsageNotices;
  let loads: number;
  const usage = (customer: string) =>
    cache.getUsage(scope, customer, 'm|from|to', async () => {
      loads += 1;
      return `${customer}-${loads}`;
    });
  const notice = (customer: string, storedAt = new Date(now).toISOString()) => ({
    key: `t:e:${customer}`,
    value: JSON.stringify({ tenant_id: 't', environment_id: 'e', external_customer_id: customer, stored_at: storedAt }),
  });

  beforeEach(async () => {
    now = Date.parse('2026-11-26T12:00:00Z');
    loads = 0;
    bus = new InProcessBus();
    cache = new AccessCache({ now: () => now, random: Math.random, refreshGatherMs: REFRESH_GATHER_MS, sweepMs: 0 });
    notices = new UsageNotices({ bus, cache, logger: testLogger(), now: () => now });
    await notices.start();
  });
  afterEach(async () => {
    await notices.stop();
  });

  it('while started, usage is kept long and a notice drops the usage of its customer only', async () => {
    expect(cache.usageTtlMs()).toBe(USAGE_TTL_NOTIFIED_MS);
    expect([await usage('x'), await usage('y')]).toEqual(['x-1', 'y-2']);
    now += USAGE_TTL_MS * 5;
    expect([await usage('x'), await usage('y')]).toEqual(['x-1', 'y-2']);
    await bus.publish(TOPICS.usageRecorded, [notice('x')]);
    // The notice read x's usage again at once (ADR 0026: refresh ahead).
    expect(loads).toBe(3);
    await new Promise((r) => setImmediate(r));
    expect([await usage('x'), await usage('y')]).toEqual(['x-3', 'y-2']);
    expect(loads).toBe(3);
  });

  it('a reset, or a message it cannot read, forgets all usage', async () => {
    await usage('x');
    await bus.publish(TOPICS.usageRecorded, [{ key: 'reset', value: JSON.stringify({ reset: true, stored_at: new Date(now).toISOString() }) }]);
    expect(await usage('x')).toBe('x-2');
    await bus.publish(TOPICS.usageRecorded, [{ key: 't:e:x', value: '{"tenant_id":"t"}' }]);
    expect(await usage('x')).toBe('x-3');
    expect(cache.usageTtlMs()).toBe(USAGE_TTL_NOTIFIED_MS);
  });

  it('a notice that came late forgets all usage and keeps usage 1 s for a while', async () => {
    await usage('y');
    await bus.publish(TOPICS.usageRecorded, [notice('x', new Date(now - USAGE_NOTICE_LATE_MS).toISOString())]);
    expect(await usage('y')).toBe('y-1');
    await bus.publish(TOPICS.usageRecorded, [notice('x', new Date(now - USAGE_NOTICE_LATE_MS - 1).toISOString())]);
    expect(await usage('y')).toBe('y-2');
    expect(cache.usageTtlMs()).toBe(USAGE_TTL_MS);
  });

  it('once stopped, usage is kept 1 s again', async () => {
    await notices.stop();
    expect(cache.usageTtlMs()).toBe(USAGE_TTL_MS);
  });
});
