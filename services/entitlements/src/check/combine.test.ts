import type { Entitlement, Feature, GrantingSubscription } from '../projection/domain';
import { combine, CustomerGrants, type GrantSource } from './access';
import { resetWindow } from './windows';

describe('combining grants', () => {
  const now = new Date('2026-11-26T15:00:00Z');
  const feature = (type: Feature['type']): Feature => ({
    id: 'feat_1', tenantId: 't', environmentId: 'e', lookupKey: 'f', type, meterId: type === 'METERED' ? 'meter_1' : null, status: 'active',
  });
  const sub = (id: string, start: string, period?: [string, string]): GrantingSubscription => ({
    id, customerId: 'c', planId: `plan_${id}`, startDate: new Date(start),
    currentPeriodStart: period ? new Date(period[0]) : null, currentPeriodEnd: period ? new Date(period[1]) : null, createdAt: new Date(start),
  });
  const source = (s: GrantingSubscription, g: Partial<Entitlement>): GrantSource => ({
    subscription: s,
    entitlement: {
      id: `ent_${s.id}`, planId: s.planId, featureId: 'feat_1', isEnabled: true,
      usageLimit: null, usageResetPeriod: 'NEVER', isSoftLimit: false, staticValue: null, ...g,
    },
  });

  it('windows: UTC day and month, the current period, or from the start on', () => {
    const s = sub('s', '2026-09-10T08:00:00Z', ['2026-11-10T08:00:00Z', '2026-12-10T08:00:00Z']);
    expect(resetWindow('DAILY', s, now)).toEqual({ start: new Date('2026-11-26T00:00:00Z'), end: new Date('2026-11-27T00:00:00Z') });
    expect(resetWindow('MONTHLY', s, new Date('2026-12-31T23:59:59Z'))).toEqual({ start: new Date('2026-12-01T00:00:00Z'), end: new Date('2027-01-01T00:00:00Z') });
    expect(resetWindow('BILLING_PERIOD', s, now)).toEqual({ start: new Date('2026-11-10T08:00:00Z'), end: new Date('2026-12-10T08:00:00Z') });
    expect(resetWindow('NEVER', s, now)).toEqual({ start: new Date('2026-09-10T08:00:00Z'), end: null });
  });

  it('limits of enabled grants add up, one unlimited wins, disabled grants count for nothing; the latest start and earliest end', () => {
    const a = sub('a', '2026-09-10T08:00:00Z', ['2026-11-10T08:00:00Z', '2026-12-10T08:00:00Z']);
    const b = sub('b', '2026-10-01T00:00:00Z');
    const c = sub('c', '2026-10-02T00:00:00Z');
    const summed = combine(feature('METERED'), [
      source(a, { usageLimit: '10', usageResetPeriod: 'BILLING_PERIOD' }),
      source(b, { usageLimit: '2.5', usageResetPeriod: 'MONTHLY' }),
      source(c, { usageLimit: null, isEnabled: false, isSoftLimit: true }),
    ], now);
    expect(summed).toMatchObject({ isEnabled: true, usageLimit: '12.5', isSoftLimit: false, usageResetPeriod: 'BILLING_PERIOD' });
    expect(summed.window).toEqual({ start: new Date('2026-11-10T08:00:00Z'), end: new Date('2026-12-01T00:00:00Z') });
    expect(summed.sources).toHaveLength(3);
    const unlimited = combine(feature('METERED'), [source(a, { usageLimit: '10' }), source(c, { usageLimit: null, isSoftLimit: true })], now);
    expect(unlimited).toMatchObject({ usageLimit: null, isSoftLimit: true });
    expect(combine(feature('METERED'), [source(c, { isEnabled: false, usageLimit: '3' })], now)).toMatchObject({ isEnabled: false, usageLimit: null, window: null });
  });

  it('STATIC: the newest subscription enabled value', () => {
    const old = sub('a', '2026-01-01T00:00:00Z');
    const newer = sub('b', '2026-06-01T00:00:00Z');
    const newest = sub('c', '2026-07-01T00:00:00Z');
    const s = combine(feature('STATIC'), [
      source(newer, { staticValue: 'gold', usageResetPeriod: null }),
      source(old, { staticValue: 'silver', usageResetPeriod: null }),
      source(newest, { staticValue: 'off', usageResetPeriod: null, isEnabled: false }),
    ], now);
    expect(s).toMatchObject({ isEnabled: true, staticValue: 'gold', usageLimit: null, window: null });
  });
});

describe("a customer's grants as the check cache keeps them", () => {
  const at = new Date('2026-11-01T00:00:00Z');
  const subscription = (id: string, planId: string) => ({ id, customerId: 'cus_1', planId, startDate: at, currentPeriodStart: null, currentPeriodEnd: null, createdAt: at });
  const entitlement = (id: string, planId: string, featureId: string): Entitlement => ({
    id, planId, featureId, isEnabled: true, usageLimit: null, usageResetPeriod: null, isSoftLimit: false, staticValue: null,
  });
  const ofPlan = new Map([
    ['plan_a', new Map([['f1', [entitlement('ent_a1', 'plan_a', 'f1')]], ['f2', [entitlement('ent_a2', 'plan_a', 'f2')]]])],
    ['plan_b', new Map([['f2', [entitlement('ent_b2', 'plan_b', 'f2')]], ['f3', [entitlement('ent_b3', 'plan_b', 'f3')]]])],
  ]);

  it('per feature, each subscription with its plan\'s entitlements, in subscription order; every feature once', () => {
    const grants = new CustomerGrants([subscription('sub_1', 'plan_a'), subscription('sub_2', 'plan_b')], ofPlan);
    expect(grants.featureIds()).toEqual(['f1', 'f2', 'f3']);
    expect(grants.of('f2').map((g) => [g.subscription.id, g.entitlement.id])).toEqual([
      ['sub_1', 'ent_a2'],
      ['sub_2', 'ent_b2'],
    ]);
    expect(grants.of('f3').map((g) => g.entitlement.id)).toEqual(['ent_b3']);
    expect(grants.of('f9')).toEqual([]);
  });

  it('customers of one batch share the plans\' entitlements; a customer without subscriptions has none', () => {
    const one = new CustomerGrants([subscription('sub_1', 'plan_a')], ofPlan);
    const other = new CustomerGrants([subscription('sub_3', 'plan_a')], ofPlan);
    expect(one.of('f1')[0].entitlement).toBe(other.of('f1')[0].entitlement);
    expect(new CustomerGrants([], ofPlan).featureIds()).toEqual([]);
    expect(new CustomerGrants([subscription('sub_4', 'plan_gone')], ofPlan).of('f1')).toEqual([]);
  });
});
