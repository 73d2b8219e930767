import type { Decimal } from 'decimal.js';
import type { AlertSettings, AlertState } from '../wallets/domain';

const SEVERITY: Record<AlertState, number> = { ok: 0, info: 1, warning: 2, critical: 3 };

/** The alert state of a balance: the most severe level whose threshold the balance is below. */
export function alertStateOf(settings: AlertSettings | null, balance: Decimal): AlertState {
  if (!settings?.alertEnabled) return 'ok';
  if (settings.critical && balance.lessThan(settings.critical.threshold)) return 'critical';
  if (settings.warning && balance.lessThan(settings.warning.threshold)) return 'warning';
  if (settings.info && balance.lessThan(settings.info.threshold)) return 'info';
  return 'ok';
}

export type AlertMove = 'dropped' | 'recovered' | undefined;

/**
 * What a move between states announces: a move to a worse state has dropped, a return to
 * `ok` has recovered, anything else (staying, or improving without reaching ok) nothing.
 */
export function alertMove(previous: AlertState, next: AlertState): AlertMove {
  if (SEVERITY[next] > SEVERITY[previous]) return 'dropped';
  if (next === 'ok' && previous !== 'ok') return 'recovered';
  return undefined;
}

/** The threshold that defines a state, for event payloads. */
export function thresholdOf(settings: AlertSettings | null, state: AlertState): Decimal | undefined {
  if (!settings || state === 'ok') return undefined;
  return settings[state]?.threshold;
}
