import { Exact } from '@billstream/money';
import { META, startLedgerHarness, type LedgerHarness } from '../testing/harness';
import { assertLedgerAddsUp } from '../testing/invariants';
import type { AlertSettings } from '../wallets/domain';

const D = (v: string) => new Exact(v);
const debit = (credits: string) => ({ credits: D(credits), reason: 'MANUAL_BALANCE_DEBIT' as const, description: null, idempotencyKey: null });
const topup = (credits: string, reason: 'PURCHASED_CREDIT_DIRECT' | 'PURCHASED_CREDIT_INVOICED' = 'PURCHASED_CREDIT_DIRECT') => ({
  credits: D(credits),
  reason,
  expiryDate: null,
  priority: null,
  description: null,
  idempotencyKey: null,
});
const alerts: AlertSettings = {
  alertEnabled: true,
  critical: { threshold: D('5'), condition: 'below' },
  warning: { threshold: D('10'), condition: 'below' },
};

describe('wallet alerts and auto top-up (real Postgres)', () => {
  let h: LedgerHarness;
  beforeAll(async () => {
    h = await startLedgerHarness();
  });
  afterAll(async () => {
    await h?.stop();
  });

  const alertEvents = async (walletId: string, kind: string) =>
    (await h.events(walletId))
      .filter((e) => e.type.startsWith(`wallet.${kind}.`))
      .map((e) => `${e.type.split('.').pop()}:${e.payload.alert.previous_state}->${e.payload.alert.state}`);

  it('publishes dropped once per move to a worse state and recovered once on the return to ok', async () => {
    const w = await h.wallet({ initialCredits: D('20'), alertSettings: alerts });
    for (const step of [
      () => h.service.entries.debit(META, w.id, debit('8')), // 12 ok
      () => h.service.entries.debit(META, w.id, debit('4')), // 8 warning
      () => h.service.entries.debit(META, w.id, debit('1')), // 7 warning
      () => h.service.entries.debit(META, w.id, debit('3')), // 4 critical
      () => h.service.entries.debit(META, w.id, debit('1')), // 3 critical
      () => h.service.entries.topup(META, w.id, topup('5')), // 8 warning
      () => h.service.entries.topup(META, w.id, topup('7')), // 15 ok
      () => h.service.entries.topup(META, w.id, topup('1')), // 16 ok
      () => h.service.entries.debit(META, w.id, debit('7')), // 9 warning
    ]) {
      await step();
    }
    expect(await alertEvents(w.id, 'credit_balance')).toEqual([
      'dropped:ok->warning',
      'dropped:warning->critical',
      'recovered:warning->ok',
      'dropped:ok->warning',
    ]);
    expect((await h.service.wallets.get(META, w.id)).alertState).toBe('warning');
    const dropped = (await h.events(w.id, 'wallet.credit_balance.dropped'))[0];
    expect(dropped.payload.alert).toMatchObject({ kind: 'credit_balance', balance: '8', threshold: '10' });
    expect(dropped.payload.wallet).toMatchObject({ id: w.id, credit_balance: '8', alert_state: 'warning' });
  });

  it('tracks the real-time balance separately as ongoing_balance', async () => {
    const w = await h.wallet({ initialCredits: D('12'), alertSettings: alerts });
    await h.service.entries.topup(META, w.id, topup('10', 'PURCHASED_CREDIT_INVOICED')); // real-time 22
    await h.service.entries.debit(META, w.id, debit('4')); // credit 8 warning, real-time 18 ok
    expect(await alertEvents(w.id, 'credit_balance')).toEqual(['dropped:ok->warning']);
    expect(await alertEvents(w.id, 'ongoing_balance')).toEqual([]);
    await h.service.entries.debit(META, w.id, debit('6')); // credit 2 critical, real-time 12 ok
    const pending = await h.db('transactions').where({ wallet_id: w.id, transaction_status: 'PENDING' }).first();
    await h.service.entries.settleInvoiced(META, w.id, pending.id, 'FAILED'); // real-time 2 critical
    expect(await alertEvents(w.id, 'ongoing_balance')).toEqual(['dropped:ok->critical']);
    expect(await alertEvents(w.id, 'credit_balance')).toEqual(['dropped:ok->warning', 'dropped:warning->critical']);
  });

  it('PATCH of the alert settings recomputes the state, and disabled alerts publish nothing', async () => {
    const w = await h.wallet({ initialCredits: D('3') });
    expect(await alertEvents(w.id, 'credit_balance')).toEqual([]);
    const updated = await h.service.wallets.update(META, w.id, { alertSettings: alerts });
    expect(updated.alertState).toBe('critical');
    expect(await alertEvents(w.id, 'credit_balance')).toEqual(['dropped:ok->critical']);
    await h.service.wallets.update(META, w.id, { alertSettings: { ...alerts, alertEnabled: false } });
    await h.service.entries.debit(META, w.id, debit('1'));
    expect(await alertEvents(w.id, 'credit_balance')).toEqual(['dropped:ok->critical', 'recovered:critical->ok']);
  });

  it('auto top-up fires once per crossing of the threshold', async () => {
    const w = await h.wallet({
      initialCredits: D('20'),
      autoTopup: { enabled: true, threshold: D('10'), amount: D('50'), invoicing: false },
    });
    await h.service.entries.debit(META, w.id, debit('5')); // 15
    await h.service.entries.debit(META, w.id, debit('6')); // 9 -> +50 = 59
    const autos = () => h.db('transactions').where({ wallet_id: w.id, description: 'Auto top-up' }).orderBy('id');
    expect((await autos()).map((t) => [t.transaction_reason, t.transaction_status, t.credit_balance_before, t.credit_balance_after])).toEqual([
      ['PURCHASED_CREDIT_DIRECT', 'COMPLETED', '9', '59'],
    ]);
    await h.service.entries.debit(META, w.id, debit('48')); // 11
    expect(await autos()).toHaveLength(1);
    await h.service.entries.debit(META, w.id, debit('2')); // 9 -> 59
    expect(await autos()).toHaveLength(2);
    await assertLedgerAddsUp(h.db, w.id, h.clock.now());
  });

  it('an invoiced auto top-up is PENDING and does not fire again while the balance stays below, even under concurrent debits', async () => {
    const w = await h.wallet({
      initialCredits: D('40'),
      autoTopup: { enabled: true, threshold: D('10'), amount: D('50'), invoicing: true },
    });
    const results = await Promise.allSettled(Array.from({ length: 40 }, () => h.service.entries.debit(META, w.id, debit('1'))));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(40);
    const autos = await h.db('transactions').where({ wallet_id: w.id, description: 'Auto top-up' });
    expect(autos.map((t) => [t.transaction_reason, t.transaction_status, t.credit_amount])).toEqual([['PURCHASED_CREDIT_INVOICED', 'PENDING', '50']]);
    await h.service.entries.settleInvoiced(META, w.id, autos[0].id, 'COMPLETED');
    const wallet = await h.service.wallets.get(META, w.id);
    expect(wallet.creditBalance.toFixed()).toBe('50');
    await assertLedgerAddsUp(h.db, w.id, h.clock.now());
  });
});
