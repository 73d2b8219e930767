import { exact } from '@billstream/money';
import type { Wallet } from './domain';
import { balanceView } from './view';

describe('balance view', () => {
  it('adds pending credits and takes pending debits off in the real-time balance', () => {
    const wallet = {
      id: 'wallet_1',
      currency: 'usd',
      creditBalance: exact('10'),
      pendingCredits: exact('5.5'),
      pendingDebits: exact('2'),
      conversionRate: exact('2'),
      walletType: 'POST_PAID',
      allowedPriceTypes: ['ALL'],
    } as unknown as Wallet;
    expect(balanceView(wallet, { free: exact('4'), purchased: exact('6') }, true)).toEqual({
      wallet_id: 'wallet_1',
      currency: 'usd',
      balance: '20',
      credit_balance: '10',
      conversion_rate: '2',
      credits_available_breakdown: { purchased: '6', free: '4' },
      real_time_balance: '27',
      real_time_credit_balance: '13.5',
      // Not a PRE_PAID wallet: unbilled usage does not count (ADR 0024).
      unbilled_usage: 0,
      as_of: null,
    });
  });

  it('takes the unbilled usage (minor units) off a PRE_PAID wallet that allows USAGE: exactly in money, ÷ conversion rate in credits', () => {
    const asOf = new Date('2026-11-26T10:00:00.000Z');
    const wallet = {
      id: 'wallet_2',
      currency: 'usd',
      creditBalance: exact('10'),
      pendingCredits: exact('5.5'),
      pendingDebits: exact('2'),
      conversionRate: exact('2'),
      walletType: 'PRE_PAID',
      allowedPriceTypes: ['USAGE'],
      unbilledUsage: exact('250'),
      unbilledAsOf: asOf,
    } as unknown as Wallet;
    expect(balanceView(wallet, { free: exact('4'), purchased: exact('6') }, true)).toMatchObject({
      // (10 + 5.5 - 2) credits x 2 = 27 USD, less 2.50 USD unbilled.
      real_time_balance: '24.5',
      real_time_credit_balance: '12.25',
      unbilled_usage: 250,
      as_of: asOf.toISOString(),
    });
    // Without include_real_time_balance none of it is shown.
    expect(balanceView(wallet, { free: exact('4'), purchased: exact('6') }, false)).not.toHaveProperty('unbilled_usage');
  });
});
