import { toDecimalString } from '@billstream/money';
import type { Decimal } from 'decimal.js';
import { alertMove, alertStateOf, thresholdOf } from '../alerts/alerts';
import { WALLET_EVENTS } from '../events';
import type { AlertState } from '../wallets/domain';
import { realTimeCreditBalance, walletView } from '../wallets/view';
import type { WalletChange } from './change';

const ALERT_EVENTS = {
  credit_balance: { dropped: WALLET_EVENTS.creditBalanceDropped, recovered: WALLET_EVENTS.creditBalanceRecovered },
  ongoing_balance: { dropped: WALLET_EVENTS.ongoingBalanceDropped, recovered: WALLET_EVENTS.ongoingBalanceRecovered },
} as const;

/** Moves the alert states to the balances the change leaves, announcing each drop and recovery. */
export function updateAlertStates(change: WalletChange): void {
  const w = change.wallet;
  const previous = { credit: w.alertState, ongoing: w.ongoingAlertState };
  w.alertState = alertStateOf(w.alertSettings, w.creditBalance);
  w.ongoingAlertState = alertStateOf(w.alertSettings, realTimeCreditBalance(w));
  if (w.alertState === previous.credit && w.ongoingAlertState === previous.ongoing) return;
  change.dirty = true;
  announce(change, 'credit_balance', previous.credit, w.alertState, w.creditBalance);
  announce(change, 'ongoing_balance', previous.ongoing, w.ongoingAlertState, realTimeCreditBalance(w));
}

function announce(change: WalletChange, kind: 'credit_balance' | 'ongoing_balance', previous: AlertState, next: AlertState, balance: Decimal): void {
  const move = alertMove(previous, next);
  if (!move) return;
  const threshold = thresholdOf(change.wallet.alertSettings, move === 'dropped' ? next : previous);
  change.emit(ALERT_EVENTS[kind][move], {
    wallet: walletView(change.wallet),
    alert: {
      kind,
      state: next,
      previous_state: previous,
      balance: toDecimalString(balance),
      threshold: threshold ? toDecimalString(threshold) : null,
    },
  });
}
