/**
 * Chart data shaping, pure (no chart code, so the pages that only shape data stay light): the
 * API's windows and counts become aligned series: one sorted list of times (seconds, as uPlot
 * takes them) and, per series, a value at each time (0 where the API had no window).
 */
export interface Series {
  label: string;
  points: Array<{ at: number; value: number }>;
}

export interface Aligned {
  times: number[];
  values: number[][];
}

/** Every series on the union of their times, ascending; a missing point is 0. */
export function align(series: Series[]): Aligned {
  const times = [...new Set(series.flatMap((s) => s.points.map((p) => p.at)))].sort((a, b) => a - b);
  const index = new Map(times.map((t, i) => [t, i]));
  const values = series.map((s) => {
    const row = times.map(() => 0);
    for (const p of s.points) {
      const i = index.get(p.at) as number;
      row[i] = (row[i] ?? 0) + p.value;
    }
    return row;
  });
  return { times, values };
}

const DAY = 86_400;
const HOUR = 3_600;

/** The starts (seconds) of the UTC days or hours from `from` up to `to` (both ISO), oldest first. */
export function buckets(from: string, to: string, size: 'DAY' | 'HOUR'): number[] {
  const step = size === 'DAY' ? DAY : HOUR;
  const start = Math.floor(Date.parse(from) / 1000 / step) * step;
  const end = Date.parse(to) / 1000;
  const out: number[] = [];
  for (let t = start; t < end; t += step) out.push(t);
  return out;
}

/** A meter's usage windows (`{start, value}` with decimal strings) on every bucket of the range, 0 where none. */
export function windowSeries(label: string, windows: Array<{ start: string; value: string }>, from: string, to: string, size: 'DAY' | 'HOUR'): Series {
  const byStart = new Map(windows.map((w) => [Math.floor(Date.parse(w.start) / 1000), Number(w.value)]));
  return { label, points: buckets(from, to, size).map((at) => ({ at, value: byStart.get(at) ?? 0 })) };
}

/** Midnight UTC `days` days before `now`, and `now`, as ISO strings: the range of a daily chart. */
export function lastDays(days: number, now = new Date()): { from: string; to: string } {
  const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - days + 1));
  return { from: from.toISOString(), to: now.toISOString() };
}

/** The start of the current UTC hour minus `hours - 1` hours, and `now`: the range of an hourly chart. */
export function lastHours(hours: number, now = new Date()): { from: string; to: string } {
  const from = new Date(Math.floor(now.getTime() / 3_600_000) * 3_600_000 - (hours - 1) * 3_600_000);
  return { from: from.toISOString(), to: now.toISOString() };
}

/** Invoiced and collected per day (GET /v1/reports/billing_daily) as two series per currency, on every day of the range. */
export function moneyByCurrency(days: Array<{ date: string; currency: string; invoiced: number; collected: number }>, from: string, to: string): Array<{ currency: string; data: Aligned }> {
  const currencies = [...new Set(days.map((d) => d.currency))].sort();
  return currencies.map((currency) => {
    const rows = days.filter((d) => d.currency === currency);
    const points = (pick: (d: (typeof rows)[number]) => number) => {
      const byDay = new Map(rows.map((d) => [Date.parse(`${d.date}T00:00:00Z`) / 1000, pick(d)]));
      return buckets(from, to, 'DAY').map((at) => ({ at, value: byDay.get(at) ?? 0 }));
    };
    return { currency, data: align([{ label: 'Invoiced', points: points((d) => d.invoiced) }, { label: 'Collected', points: points((d) => d.collected) }]) };
  });
}
