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
    } as Wallet;
    expect(balanceView(wallet, { free: exact('4'), purchased: exact('6') }, true)).toEqual({
      wallet_id: 'wallet_1',
      currency: 'usd',
      balance: '20',
      credit_balance: '10',
      conversion_rate: '2',
      credits_available_breakdown: { purchased: '6', free: '4' },
      real_time_balance: '27',
      real_time_credit_balance: '13.5',
    });
  });
});
