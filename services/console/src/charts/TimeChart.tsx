import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { Aligned } from './series';

const COLOURS = ['#1f4fbf', '#b5542a', '#2d7d46', '#7a3fa0'];

/**
 * A time chart drawn by uPlot (ADR 0050, "Charts"): loaded lazily, only by the pages that draw
 * one. The canvas is hidden from assistive technology: the figure's table (ChartFigure) carries
 * the same numbers as text.
 */
export default function TimeChart({ data, labels, bars = false, width = 720, format }: { data: Aligned; labels: string[]; bars?: boolean; width?: number; format?: (v: number, series: number) => string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!box.current) return;
    // Half a step of room at both ends, so the first and last bars are drawn whole.
    const step = data.times.length > 1 ? (data.times[1] as number) - (data.times[0] as number) : 3600;
    const opts: uPlot.Options = {
      width,
      height: 220,
      legend: { show: labels.length > 1 },
      scales: { x: { time: true, range: (_u, min, max) => [min - step / 2, max + step / 2] } },
      series: [
        {},
        ...labels.map((label, i) => ({
          label,
          stroke: COLOURS[i % COLOURS.length],
          width: 2,
          fill: bars ? `${COLOURS[i % COLOURS.length]}33` : undefined,
          paths: bars ? uPlot.paths.bars?.({ size: [0.6 / labels.length, 40], align: (labels.length > 1 ? (i === 0 ? -1 : 1) : 0) as -1 | 0 | 1 }) : undefined,
          points: { show: !bars },
          value: format ? (_u: uPlot, v: number | null) => (v === null ? '–' : format(v, i)) : undefined,
        })),
      ],
      axes: [{}, { size: 80, values: format ? (_u, splits) => splits.map((v) => format(v, 0)) : undefined }],
    };
    const chart = new uPlot(opts, [data.times, ...data.values], box.current);
    return () => chart.destroy();
  }, [data, labels, bars, width, format]);
  return <div ref={box} aria-hidden="true" />;
}
