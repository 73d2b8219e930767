import { Exact } from '@billstream/money';
import type { AlertSettings, Wallet } from '../wallets/domain';
import { alertMove, alertStateOf, thresholdOf } from './alerts';
import { autoTopupDue } from './auto-topup';

const D = (v: string) => new Exact(v);
const settings: AlertSettings = {
  alertEnabled: true,
  critical: { threshold: D('1'), condition: 'below' },
  warning: { threshold: D('5'), condition: 'below' },
  info: { threshold: D('10'), condition: 'below' },
};

describe('alert states', () => {
  it('is the most severe level whose threshold the balance is strictly below', () => {
    expect(['0.5', '1', '4.999999999999999999', '5', '9', '10', '100'].map((b) => alertStateOf(settings, D(b)))).toEqual([
      'critical',
      'warning',
      'warning',
      'info',
      'info',
      'ok',
      'ok',
    ]);
  });

  it('is ok when alerts are off or not configured', () => {
    expect(alertStateOf(null, D('0'))).toBe('ok');
    expect(alertStateOf({ ...settings, alertEnabled: false }, D('0'))).toBe('ok');
  });

  it('announces a move to a worse state as dropped and a return to ok as recovered, nothing else', () => {
    expect(alertMove('ok', 'warning')).toBe('dropped');
    expect(alertMove('warning', 'critical')).toBe('dropped');
    expect(alertMove('critical', 'warning')).toBeUndefined();
    expect(alertMove('warning', 'warning')).toBeUndefined();
    expect(alertMove('info', 'ok')).toBe('recovered');
    expect(alertMove('ok', 'ok')).toBeUndefined();
    expect(thresholdOf(settings, 'warning')?.toFixed()).toBe('5');
    expect(thresholdOf(settings, 'ok')).toBeUndefined();
  });
});

describe('auto top-up', () => {
  const wallet = (balance: string, overrides: Partial<Wallet> = {}) =>
    ({
      walletStatus: 'active',
      creditBalance: D(balance),
      autoTopup: { enabled: true, threshold: D('10'), amount: D('50'), invoicing: false },
      ...overrides,
    }) as Wallet;

  it('is due only when a movement crosses from at or above the threshold to below it', () => {
    expect(autoTopupDue(wallet('9.99'), D('10'))).toBe(true);
    expect(autoTopupDue(wallet('9'), D('9.5'))).toBe(false);
    expect(autoTopupDue(wallet('10'), D('12'))).toBe(false);
  });

  it('is never due when disabled, or for a wallet that is not active', () => {
    expect(autoTopupDue(wallet('1', { autoTopup: { enabled: false, threshold: D('10'), amount: D('5'), invoicing: false } }), D('20'))).toBe(false);
    expect(autoTopupDue(wallet('1', { walletStatus: 'frozen' }), D('20'))).toBe(false);
    expect(autoTopupDue(wallet('1', { autoTopup: null }), D('20'))).toBe(false);
  });
});
