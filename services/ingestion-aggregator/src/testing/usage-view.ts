import type { WindowSize } from '@billstream/contracts';
import { toDecimalString } from '@billstream/money';
import { windowsOf } from '../meters/service';
import type { UsageRows } from '../meters/usage-store';

export const usageValue = (v: string | null | undefined) => toDecimalString(v ?? '0');

/** What `POST /v1/meters/{id}/usage` answers for these rows (the tests compare rollups and raw scans by it). */
export function usageView(rows: UsageRows, from: string, to: string, windowSize: WindowSize | undefined) {
  return {
    value: usageValue(rows.total),
    windows: windowSize ? windowsOf(from, to, windowSize).map((w) => [w.key, usageValue(rows.byWindow.get(w.key))]) : [],
  };
}
