import { lazy, Suspense } from 'react';
import type { Aligned } from './series';

const TimeChart = lazy(() => import('./TimeChart'));

const label = (t: number, hourly: boolean) => new Date(t * 1000).toISOString().slice(0, hourly ? 16 : 10).replace('T', ' ');

/** A chart with its caption and the same figures as a table (the text alternative), the chart code loaded on first use. */
export function ChartFigure({ title, data, labels, hourly = false, bars = false, format = String }: { title: string; data: Aligned; labels: string[]; hourly?: boolean; bars?: boolean; format?: (v: number, series: number) => string }) {
  return (
    <figure className="chart">
      <figcaption>{title}</figcaption>
      <Suspense fallback={<p aria-busy="true">Loading the chart…</p>}>
        <TimeChart data={data} labels={labels} bars={bars} format={format === String ? undefined : format} />
      </Suspense>
      <details>
        <summary>The figures of “{title}”</summary>
        <table>
          <thead>
            <tr>
              <th scope="col">{hourly ? 'Hour (UTC)' : 'Day (UTC)'}</th>
              {labels.map((l) => (
                <th scope="col" key={l}>
                  {l}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {data.times.map((t, i) => (
              <tr key={t}>
                <th scope="row">{label(t, hourly)}</th>
                {data.values.map((row, s) => (
                  <td key={s}>{format(row[i] ?? 0, s)}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
