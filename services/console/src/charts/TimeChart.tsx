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
export default function TimeChart({ data, labels, bars = false, width = 720 }: { data: Aligned; labels: string[]; bars?: boolean; width?: number }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!box.current) return;
    const opts: uPlot.Options = {
      width,
      height: 220,
      legend: { show: labels.length > 1 },
      scales: { x: { time: true } },
      series: [{}, ...labels.map((label, i) => ({ label, stroke: COLOURS[i % COLOURS.length], width: 2, fill: bars ? `${COLOURS[i % COLOURS.length]}33` : undefined, paths: bars ? uPlot.paths.bars?.({ size: [0.6, 40] }) : undefined }))],
      axes: [{}, { size: 60 }],
    };
    const chart = new uPlot(opts, [data.times, ...data.values], box.current);
    return () => chart.destroy();
  }, [data, labels, bars, width]);
  return <div ref={box} aria-hidden="true" />;
}
