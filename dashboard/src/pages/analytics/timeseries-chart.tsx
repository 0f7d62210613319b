// The sends, opens and clicks of a campaign over time, drawn with uPlot (a canvas): its module
// is imported only by the analytics page, which is loaded when first opened, so the initial
// JavaScript does not carry it. The canvas says nothing to a screen reader: the figure is
// named, and the same numbers are a table beside it.
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

interface Point {
  at: string;
  sent: number;
  opened: number;
  clicked: number;
}

export const SERIES = [
  { key: 'sent', label: 'Sent', stroke: '#2f5fa7' },
  { key: 'opened', label: 'Opened', stroke: '#1b7f4d' },
  { key: 'clicked', label: 'Clicked', stroke: '#b0511a' },
] as const;

const HEIGHT = 240;

export function TimeseriesChart({ points, label }: { points: Point[]; label: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current!;
    const data: uPlot.AlignedData = [points.map((p) => Date.parse(p.at) / 1000), ...SERIES.map((s) => points.map((p) => p[s.key]))];
    const plot = new uPlot(
      {
        width: el.clientWidth,
        height: HEIGHT,
        series: [{}, ...SERIES.map((s) => ({ label: s.label, stroke: s.stroke, width: 2 }))],
        axes: [{}, { size: 48 }],
        cursor: { drag: { x: false, y: false } },
      },
      data,
      el,
    );
    // At phone width and on a turned screen the chart follows its box.
    const resize = new ResizeObserver(() => plot.setSize({ width: el.clientWidth, height: HEIGHT }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [points]);
  return <div ref={box} className="timeseries" role="img" aria-label={label} />;
}
