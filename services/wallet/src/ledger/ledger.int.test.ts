/** One file: every case runs on the one ledger harness (a migrated database and the wallet service) started in beforeAll. */
import { DomainError } from '@billstream/errors';
import { Exact } from '@billstream/money';
import { migratedDb, testLogger } from '@billstream/testing';
import { migrations, SCHEMA } from '../migrations';
import { createWalletService } from '../service';
import { META, startLedgerHarness, type LedgerHarness } from '../testing/harness';
import { assertLedgerAddsUp } from '../testing/invariants';
import type { TopupInput } from '../entries/domain';

const D = (v: string) => new Exact(v);
const topup = (credits: string, extra: Partial<TopupInput> = {}): TopupInput => ({
  credits: D(credits),
  reason: 'PURCHASED_CREDIT_DIRECT',
  expiryDate: null,
  priority: null,
  description: null,
  idempotencyKey: null,
  ...extra,
});
const debit = (credits: string, idempotencyKey: string | null = null) => ({
  credits: D(credits),
  reason: 'MANUAL_BALANCE_DEBIT' as const,
  description: null,
  idempotencyKey,
});

async function failure(p: Promise<unknown>): Promise<DomainError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error('expected a failure');
}

describe('wallet ledger (real Postgres)', () => {
  let h: LedgerHarness;
  beforeAll(async () => {
    h = await startLedgerHarness();
  });
  afterAll(async () => {
    await h?.stop();
  });
  const check = (walletId: string) => assertLedgerAddsUp(h.db, walletId, h.clock.now());

  describe('exact money', () => {
    it('adds 0.1 and 0.2 to exactly 0.3 and keeps 18 fraction digits', async () => {
      const w = await h.wallet();
      await h.service.entries.topup(META, w.id, topup('0.1'));
      await h.service.entries.topup(META, w.id, topup('0.2'));
      await h.service.entries.topup(META, w.id, topup('0.000000000000000001'));
      const { wallet } = await h.service.wallets.balance(META, w.id);
      expect(wallet.creditBalance.toFixed()).toBe('0.300000000000000001');
      await check(w.id);
    });

    it('computes balance = credit_balance x conversion_rate exactly, whatever the digits', async () => {
      const rate = '1.123456789012345678';
      const w = await h.wallet({ conversionRate: D(rate), topupConversionRate: D('0.333333333333333333') });
      const credits = '1234567890123456789012345678.123456789012345678';
      const t = await h.service.entries.topup(META, w.id, topup(credits));
      expect(t.entry.amount.toFixed()).toBe(D(credits).times('0.333333333333333333').toFixed());
      const { wallet } = await h.service.wallets.balance(META, w.id);
      expect(wallet.creditBalance.times(wallet.conversionRate).toFixed()).toBe(
        '1386983677655845155404663934.666666667530864198527968299765279684',
      );
      const row = await h.db('wallets').where({ id: w.id }).first();
      expect(row.credit_balance).toBe(credits);
      const d = await h.service.entries.debit(META, w.id, debit('0.000000000000000007'));
      expect(d.entry.amount.toFixed()).toBe('0.000000000000000007864197523086419746');
      await check(w.id);
    });
  });

  describe('spending order', () => {
    it('spends lower priority first, then earlier expiry, then older credits, and shows what is left of each', async () => {
      const w = await h.wallet();
      const day = 86_400_000;
      const inDays = (n: number) => new Date(h.clock.now().getTime() + n * day);
      const old = await h.service.entries.topup(META, w.id, topup('10'));
      const later = await h.service.entries.topup(META, w.id, topup('10', { expiryDate: inDays(20) }));
      const sooner = await h.service.entries.topup(META, w.id, topup('10', { expiryDate: inDays(5) }));
      const prio2 = await h.service.entries.topup(META, w.id, topup('10', { priority: 2 }));
      const prio1 = await h.service.entries.topup(META, w.id, topup('10', { priority: 1, expiryDate: inDays(30) }));
      const newer = await h.service.entries.topup(META, w.id, topup('10'));
      await h.service.entries.debit(META, w.id, debit('25'));
      const left = async (id: string) => (await h.db('transactions').where({ id }).first()).credits_available;
      expect(await left(prio1.entry.id)).toBe('0');
      expect(await left(prio2.entry.id)).toBe('0');
      expect(await left(sooner.entry.id)).toBe('5');
      expect(await left(later.entry.id)).toBe('10');
      expect(await left(old.entry.id)).toBe('10');
      await h.service.entries.debit(META, w.id, debit('20'));
      expect(await left(sooner.entry.id)).toBe('0');
      expect(await left(later.entry.id)).toBe('0');
      expect(await left(old.entry.id)).toBe('5');
      expect(await left(newer.entry.id)).toBe('10');
      await check(w.id);
    });

    it('never spends pending or failed credits', async () => {
      const w = await h.wallet();
      await h.service.entries.topup(META, w.id, topup('5'));
      const pending = await h.service.entries.topup(META, w.id, topup('100', { reason: 'PURCHASED_CREDIT_INVOICED' }));
      expect(pending.entry.status).toBe('PENDING');
      expect(pending.entry.creditsAvailable.toFixed()).toBe('0');
      const err = await failure(h.service.entries.debit(META, w.id, debit('6')));
      expect(err.details).toMatchObject({ available_credits: '5' });
      await h.service.entries.settleInvoiced(META, w.id, pending.entry.id, 'FAILED');
      await expect(h.service.entries.debit(META, w.id, debit('6'))).rejects.toThrow(/Insufficient/);
      await check(w.id);
    });
  });

  describe('overdraft and wallet status', () => {
    it('refuses a debit larger than the usable credits with available_credits and changes nothing', async () => {
      const w = await h.wallet({ initialCredits: D('7.5') });
      const before = await h.db('transactions').where({ wallet_id: w.id }).select();
      const outboxBefore = await h.events(w.id);
      const err = await failure(h.service.entries.debit(META, w.id, debit('7.500000000000000001')));
      expect(err.kind).toBe('validation');
      expect(err.details).toMatchObject({ field: 'credits', available_credits: '7.5', requested_credits: '7.500000000000000001' });
      expect(await h.db('transactions').where({ wallet_id: w.id }).select()).toEqual(before);
      expect(await h.events(w.id)).toEqual(outboxBefore);
      expect((await h.db('wallets').where({ id: w.id }).first()).credit_balance).toBe('7.5');
      const ok = await h.service.entries.debit(META, w.id, debit('7.5'));
      expect(ok.entry.creditBalanceAfter.toFixed()).toBe('0');
      await check(w.id);
    });

    it('frozen and closed wallets refuse top-ups and debits with 400 naming the status', async () => {
      const w = await h.wallet({ initialCredits: D('10') });
      await h.service.wallets.update(META, w.id, { walletStatus: 'frozen' });
      for (const call of [
        () => h.service.entries.topup(META, w.id, topup('1')),
        () => h.service.entries.debit(META, w.id, debit('1')),
      ]) {
        const err = await failure(call());
        expect(err.kind).toBe('validation');
        expect(err.details).toMatchObject({ wallet_status: 'frozen' });
      }
      await h.service.wallets.update(META, w.id, { walletStatus: 'active' });
      await h.service.entries.debit(META, w.id, debit('1'));
      const closed = await h.service.wallets.terminate(META, w.id);
      expect(closed.walletStatus).toBe('closed');
      expect(closed.creditBalance.toFixed()).toBe('0');
      const termination = await h.db('transactions').where({ wallet_id: w.id, transaction_reason: 'WALLET_TERMINATION' });
      expect(termination.map((t) => t.credit_amount)).toEqual(['9']);
      const err = await failure(h.service.entries.topup(META, w.id, topup('1')));
      expect(err.details).toMatchObject({ wallet_status: 'closed' });
      await expect(h.service.wallets.update(META, w.id, { walletStatus: 'active' })).rejects.toThrow(/closed/);
      expect((await h.events(w.id, 'wallet.terminated')).length).toBe(1);
      await check(w.id);
    });
  });

  describe('idempotency keys', () => {
    it('returns the original transaction for a repeat and moves no money; another body gives idempotency_conflict', async () => {
      const w = await h.wallet({ initialCredits: D('10') });
      const first = await h.service.entries.debit(META, w.id, debit('3', 'key-1'));
      const again = await h.service.entries.debit(META, w.id, { ...debit('3.0', 'key-1') });
      expect(again.replayed).toBe(true);
      expect(again.entry.id).toBe(first.entry.id);
      const err = await failure(h.service.entries.debit(META, w.id, debit('4', 'key-1')));
      expect(err.kind).toBe('idempotency_conflict');
      const asTopup = await failure(h.service.entries.topup(META, w.id, topup('3', { idempotencyKey: 'key-1' })));
      expect(asTopup.kind).toBe('idempotency_conflict');
      const t1 = await h.service.entries.topup(META, w.id, topup('2', { idempotencyKey: 'key-2', priority: 1 }));
      const t2 = await h.service.entries.topup(META, w.id, topup('2', { idempotencyKey: 'key-2', priority: 1 }));
      expect(t2.entry.id).toBe(t1.entry.id);
      expect(await failure(h.service.entries.topup(META, w.id, topup('2', { idempotencyKey: 'key-2', priority: 2 })))).toMatchObject({
        kind: 'idempotency_conflict',
      });
      const { wallet } = await h.service.wallets.balance(META, w.id);
      expect(wallet.creditBalance.toFixed()).toBe('9');
      expect(await h.db('transactions').where({ wallet_id: w.id }).select('id')).toHaveLength(3);
      await check(w.id);
    });

    it('keeps one transaction when repeats race', async () => {
      const w = await h.wallet({ initialCredits: D('100') });
      const results = await Promise.allSettled(
        Array.from({ length: 20 }, (_, i) =>
          i % 2 === 0
            ? h.service.entries.debit(META, w.id, debit('5', 'race'))
            : h.service.entries.debit(META, w.id, debit('5', 'race')),
        ),
      );
      const ids = new Set(results.map((r) => (r.status === 'fulfilled' ? r.value.entry.id : String(r.reason))));
      expect(ids.size).toBe(1);
      expect(results.filter((r) => r.status === 'fulfilled' && !r.value.replayed)).toHaveLength(1);
      const conflicting = await Promise.allSettled(
        ['1', '2', '3', '4'].map((c) => h.service.entries.debit(META, w.id, debit(c, 'race-2'))),
      );
      expect(conflicting.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect(conflicting.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason.kind)).toEqual([
        'idempotency_conflict',
        'idempotency_conflict',
        'idempotency_conflict',
      ]);
      await check(w.id);
    });
  });

  describe('concurrency', () => {
    it('100 parallel debits of 1 credit on a 50-credit wallet: exactly 50 succeed and the balance is 0', async () => {
      const w = await h.wallet({ initialCredits: D('50') });
      const results = await Promise.allSettled(Array.from({ length: 100 }, () => h.service.entries.debit(META, w.id, debit('1'))));
      const ok = results.filter((r) => r.status === 'fulfilled');
      const refused = results.filter((r) => r.status === 'rejected') as PromiseRejectedResult[];
      expect(ok).toHaveLength(50);
      expect(refused).toHaveLength(50);
      expect(refused.every((r) => r.reason.kind === 'validation' && r.reason.details.available_credits === '0')).toBe(true);
      const { wallet } = await h.service.wallets.balance(META, w.id);
      expect(wallet.creditBalance.toFixed()).toBe('0');
      await check(w.id);
    });

    it('debits of many wallets at once share transactions and keep every answer apart', async () => {
      // 30 wallets; concurrent debits batch across wallets. Each wallet gets debits that
      // fit, one overdraft, an idempotent repeat and a conflicting reuse of that key; an
      // unknown wallet and a frozen one sit in the same batches.
      const wallets = await Promise.all(Array.from({ length: 30 }, () => h.wallet({ initialCredits: D('10') })));
      const frozen = await h.wallet({ initialCredits: D('10') });
      await h.service.wallets.update(META, frozen.id, { walletStatus: 'frozen' });
      const calls: Array<{ walletId: string; kind: string; p: Promise<{ entry: { id: string } }> }> = [];
      for (let round = 0; round < 4; round += 1) {
        for (const w of wallets) {
          const kind = ['fit', 'overdraft', 'repeat', 'conflict'][round];
          const request =
            kind === 'fit' ? debit('2.5', `k-${w.id}`) : kind === 'overdraft' ? debit('100') : kind === 'repeat' ? debit('2.5', `k-${w.id}`) : debit('3', `k-${w.id}`);
          calls.push({ walletId: w.id, kind, p: h.service.entries.debit(META, w.id, request) });
        }
        calls.push({ walletId: 'wallet_unknown', kind: 'unknown', p: h.service.entries.debit(META, 'wallet_01JUNKNOWN0000000000000000', debit('1')) });
        calls.push({ walletId: frozen.id, kind: 'frozen', p: h.service.entries.debit(META, frozen.id, debit('1')) });
      }
      const settled = await Promise.allSettled(calls.map((c) => c.p));
      const firstIds = new Map<string, string>();
      settled.forEach((r, i) => {
        const { kind, walletId } = calls[i];
        if (kind === 'fit' || kind === 'repeat') {
          expect(r.status).toBe('fulfilled');
          const id = (r as PromiseFulfilledResult<{ entry: { id: string } }>).value.entry.id;
          if (kind === 'fit') firstIds.set(walletId, id);
          else expect(id).toBe(firstIds.get(walletId));
          return;
        }
        expect(r.status).toBe('rejected');
        const reason = (r as PromiseRejectedResult).reason;
        if (kind === 'overdraft') expect(reason.details).toMatchObject({ available_credits: '7.5' });
        if (kind === 'conflict') expect(reason.kind).toBe('idempotency_conflict');
        if (kind === 'unknown') expect(reason.kind).toBe('not_found');
        if (kind === 'frozen') expect(reason.details).toMatchObject({ wallet_status: 'frozen' });
      });
      for (const w of wallets) {
        const { wallet } = await h.service.wallets.balance(META, w.id);
        expect(wallet.creditBalance.toFixed()).toBe('7.5');
        await check(w.id);
      }
      const { wallet: still } = await h.service.wallets.balance(META, frozen.id);
      expect(still.creditBalance.toFixed()).toBe('10');
      // One clock reading per database transaction: debits of several wallets shared one.
      const stamps = await h.db('transactions').whereIn('id', [...firstIds.values()]).distinct('created_at');
      expect(stamps.length).toBeLessThan(wallets.length / 2);
    });

    it('a transaction of debits sends three statements whatever it holds: lock, reads, save (ADR 0006)', async () => {
      const wallets = await Promise.all(Array.from({ length: 5 }, () => h.wallet({ initialCredits: D('100') })));
      const byTransaction = new Map<string, string[]>();
      const listener = (q: { sql: string; __knexTxId?: string }) => {
        if (!q.__knexTxId || /^(BEGIN|COMMIT|ROLLBACK)/.test(q.sql)) return;
        byTransaction.set(q.__knexTxId, [...(byTransaction.get(q.__knexTxId) ?? []), q.sql]);
      };
      h.db.on('query', listener);
      try {
        await Promise.all(
          wallets.flatMap((w) => ['a', 'b', 'c'].map((k) => h.service.entries.debit(META, w.id, debit('1', `stmt-${k}`)))),
        );
      } finally {
        h.db.off('query', listener);
      }
      const debitTransactions = [...byTransaction.values()].filter((sqls) => sqls.some((sql) => /FOR UPDATE OF w/.test(sql)));
      expect(debitTransactions.length).toBeGreaterThan(0);
      expect(debitTransactions.length).toBeLessThan(15);
      for (const sqls of debitTransactions) expect(sqls).toHaveLength(3);
    });

    it('two replicas debiting overlapping wallets at once never deadlock and lose nothing', async () => {
      // A second wallet service on its own connection pool = another replica. Both group
      // debits of many wallets into transactions whose wallet sets overlap; wallet locks are
      // always taken in id order, so no transaction waits on another in a cycle.
      const replicaDb = await migratedDb(h.database.url, SCHEMA, migrations, 10);
      const replica = createWalletService(
        { db: replicaDb, bus: h.bus, logger: testLogger('wallet-replica') },
        {
          internalToken: 'test-internal-token-0123456789',
          customerServiceUrl: 'http://127.0.0.1:9',
          expiryIntervalMs: 0,
          clock: h.clock.now,
          customerLookup: { exists: async () => false, idOfExternal: async () => undefined },
        },
      );
      try {
        const wallets = await Promise.all(Array.from({ length: 12 }, () => h.wallet({ initialCredits: D('1000') })));
        const expected = new Map(wallets.map((w) => [w.id, D('1000')]));
        const calls: Array<Promise<unknown>> = [];
        for (let i = 0; i < 600; i += 1) {
          const w = wallets[(i * 7 + Math.floor(i / 12)) % wallets.length];
          const service = i % 2 === 0 ? h.service : replica;
          if (i % 10 === 0) {
            calls.push(service.entries.topup(META, w.id, topup('2')));
            expected.set(w.id, expected.get(w.id)!.plus(2));
          } else {
            calls.push(service.entries.debit(META, w.id, debit('1')));
            expected.set(w.id, expected.get(w.id)!.minus(1));
          }
        }
        const results = await Promise.allSettled(calls);
        expect(results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);
        for (const w of wallets) {
          const { wallet } = await h.service.wallets.balance(META, w.id);
          expect(wallet.creditBalance.toFixed()).toBe(expected.get(w.id)!.toFixed());
          await check(w.id);
        }
      } finally {
        await replicaDb.destroy();
      }
    });

    it('racing top-ups and debits on one wallet lose no update', async () => {
      const w = await h.wallet({ initialCredits: D('10') });
      const calls = Array.from({ length: 120 }, (_, i) =>
        i % 3 === 0
          ? h.service.entries.topup(META, w.id, topup('0.7'))
          : h.service.entries.debit(META, w.id, debit('0.1')),
      );
      const results = await Promise.allSettled(calls);
      expect(results.every((r) => r.status === 'fulfilled')).toBe(true);
      const { wallet } = await h.service.wallets.balance(META, w.id);
      expect(wallet.creditBalance.toFixed()).toBe(D('10').plus(D('0.7').times(40)).minus(D('0.1').times(80)).toFixed());
      await check(w.id);
    });
  });

  describe('expiry', () => {
    it('never spends expired credits, even before the job; the job writes one CREDIT_EXPIRED debit per credit, once', async () => {
      const w = await h.wallet();
      const soon = (ms: number) => new Date(h.clock.now().getTime() + ms);
      const a = await h.service.entries.topup(META, w.id, topup('4', { expiryDate: soon(60_000), priority: 0 }));
      const b = await h.service.entries.topup(META, w.id, topup('6', { expiryDate: soon(120_000) }));
      await h.service.entries.topup(META, w.id, topup('1'));
      await h.service.entries.debit(META, w.id, debit('1'));
      h.clock.advance(180_000);
      const stale = await h.db('wallets').where({ id: w.id }).first();
      expect(stale.credit_balance).toBe('10');
      const err = await failure(h.service.entries.debit(META, w.id, debit('2')));
      expect(err.details).toMatchObject({ available_credits: '1' });

      const first = await h.service.expiry.runOnce();
      expect(first).toEqual({ expired_transactions: 2, wallets_affected: 1 });
      const expired = await h.db('transactions').where({ wallet_id: w.id, transaction_reason: 'CREDIT_EXPIRED' }).orderBy('id');
      expect(expired.map((t) => [t.expired_credit_id, t.credit_amount])).toEqual([
        [a.entry.id, '3'],
        [b.entry.id, '6'],
      ]);
      expect(await h.service.expiry.runOnce()).toEqual({ expired_transactions: 0, wallets_affected: 0 });
      const { wallet } = await h.service.wallets.balance(META, w.id);
      expect(wallet.creditBalance.toFixed()).toBe('1');
      await check(w.id);
    });

    it('reads write off expired credits first, and concurrent job runs expire each credit once', async () => {
      const wallets = await Promise.all(Array.from({ length: 6 }, () => h.wallet()));
      for (const w of wallets) {
        await h.service.entries.topup(META, w.id, topup('2', { expiryDate: new Date(h.clock.now().getTime() + 1000) }));
        await h.service.entries.topup(META, w.id, topup('3', { expiryDate: new Date(h.clock.now().getTime() + 2000) }));
      }
      h.clock.advance(5000);
      const read = await h.service.wallets.get(META, wallets[0].id);
      expect(read.creditBalance.toFixed()).toBe('0');
      const runs = await Promise.all([h.service.expiry.runOnce(), h.service.expiry.runOnce(), h.service.expiry.runOnce()]);
      expect(runs.reduce((s, r) => s + r.expired_transactions, 0)).toBe(10);
      expect(runs.reduce((s, r) => s + r.wallets_affected, 0)).toBe(5);
      for (const w of wallets) {
        const rows = await h.db('transactions').where({ wallet_id: w.id, transaction_reason: 'CREDIT_EXPIRED' });
        expect(rows).toHaveLength(2);
        await check(w.id);
      }
    });
  });

  describe('pending credits and the real-time balance', () => {
    it('a pending credit settled after its expiry is written off at once and never spent', async () => {
      const w = await h.wallet({ initialCredits: D('1') });
      const p = await h.service.entries.topup(
        META,
        w.id,
        topup('5', { reason: 'PURCHASED_CREDIT_INVOICED', expiryDate: new Date(h.clock.now().getTime() + 60_000) }),
      );
      h.clock.advance(120_000);
      await h.service.entries.settleInvoiced(META, w.id, p.entry.id, 'COMPLETED');
      const expired = await h.db('transactions').where({ wallet_id: w.id, transaction_reason: 'CREDIT_EXPIRED' });
      expect(expired.map((t) => [t.expired_credit_id, t.credit_amount])).toEqual([[p.entry.id, '5']]);
      expect(await failure(h.service.entries.debit(META, w.id, debit('2')))).toMatchObject({ details: { available_credits: '1' } });
      await check(w.id);
    });


    it('counts a PENDING credit only in the real-time balance until it is settled', async () => {
      const w = await h.wallet({ initialCredits: D('1'), initialCreditsExpiry: null });
      const p = await h.service.entries.topup(META, w.id, topup('9', { reason: 'PURCHASED_CREDIT_INVOICED' }));
      let { wallet } = await h.service.wallets.balance(META, w.id);
      expect(wallet.creditBalance.toFixed()).toBe('1');
      expect(wallet.creditBalance.plus(wallet.pendingCredits).toFixed()).toBe('10');
      const settled = await h.service.entries.settleInvoiced(META, w.id, p.entry.id, 'COMPLETED');
      expect(settled.status).toBe('COMPLETED');
      expect([settled.creditBalanceBefore.toFixed(), settled.creditBalanceAfter.toFixed(), settled.creditsAvailable.toFixed()]).toEqual(['1', '10', '9']);
      ({ wallet } = await h.service.wallets.balance(META, w.id));
      expect(wallet.creditBalance.toFixed()).toBe('10');
      expect(wallet.pendingCredits.toFixed()).toBe('0');
      // Settled otherwise already: refused, named; the same status again answers it (billing's retry); the public route refuses it (ADR 0056).
      const again = await failure(h.service.entries.settleInvoiced(META, w.id, p.entry.id, 'FAILED'));
      expect(again.details).toMatchObject({ transaction_status: 'COMPLETED', code: 'settled_otherwise' });
      expect((await h.service.entries.settleInvoiced(META, w.id, p.entry.id, 'COMPLETED')).status).toBe('COMPLETED');
      expect((await failure(h.service.entries.settle(META, w.id, p.entry.id, 'FAILED'))).details).toMatchObject({ code: 'settled_by_invoice', transaction_status: 'COMPLETED' });
      await check(w.id);
    });
  });
});
