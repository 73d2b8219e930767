import { quantity } from '../format';
import type { UsageItem } from './types';

/** One bar per meter of this period's usage. */
export interface MeterBar {
  label: string;
  quantity: number;
  text: string;
}

/** Sums this period's items per meter (a meter of two subscriptions is one bar). */
export function barsOf(items: UsageItem[]): MeterBar[] {
  const byMeter = new Map<string, { label: string; total: number }>();
  for (const item of items) {
    const bar = byMeter.get(item.meter_id) ?? { label: item.meter_name ?? item.display_name ?? item.meter_id, total: 0 };
    bar.total += Number(item.quantity);
    byMeter.set(item.meter_id, bar);
  }
  return [...byMeter.values()].map((b) => ({ label: b.label, quantity: b.total, text: quantity(String(b.total)) }));
}

/**
 * The usage chart: an SVG drawn by React (attributes only, no inline style, no innerHTML, so the
 * strict policy holds), hidden from assistive technology; the same numbers are the table below it.
 */
export function UsageBars({ bars }: { bars: MeterBar[] }) {
  const width = 640;
  const row = 34;
  const labelWidth = 180;
  const max = Math.max(1, ...bars.map((b) => b.quantity));
  return (
    <figure className="chart">
      <figcaption>Usage this period per meter</figcaption>
      <svg width={width} height={bars.length * row + 10} viewBox={`0 0 ${width} ${bars.length * row + 10}`} aria-hidden="true" data-testid="usage-chart">
        {bars.map((b, i) => (
          <g key={b.label} transform={`translate(0 ${i * row + 5})`}>
            <text x={0} y={18} className="chart-label">{b.label}</text>
            <rect x={labelWidth} y={4} height={20} width={Math.max(2, ((width - labelWidth - 80) * b.quantity) / max)} className="chart-bar" />
            <text x={labelWidth + Math.max(2, ((width - labelWidth - 80) * b.quantity) / max) + 6} y={18} className="chart-value">{b.text}</text>
          </g>
        ))}
      </svg>
      <table>
        <caption>Usage this period</caption>
        <thead><tr><th scope="col">Meter</th><th scope="col">Quantity</th></tr></thead>
        <tbody>{bars.map((b) => <tr key={b.label}><td>{b.label}</td><td>{b.text}</td></tr>)}</tbody>
      </table>
    </figure>
  );
}
