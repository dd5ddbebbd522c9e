import { Canvas, type Rgb } from './canvas.js';

export interface LineSeries {
  label: string;
  color: Rgb;
  x: readonly number[];
  y: readonly number[];
  /** Draw as steps of this width (a bucketed count: each x is the start of its bucket). */
  step?: number;
}

/** A vertical line at x (an event: pod unready, pod deleted, node down). */
export interface Marker {
  x: number;
  label: string;
  color: Rgb;
}

export interface Panel {
  title: string;
  xLabel: string;
  series: LineSeries[];
  markers: Marker[];
}

export interface ChartSpec {
  title: string;
  subtitle?: string;
  panels: Panel[];
  width?: number;
  panelHeight?: number;
}

const INK: Rgb = [30, 30, 30];
const GRID: Rgb = [225, 225, 225];
const MUTED: Rgb = [110, 110, 110];

/** A "nice" step for about `count` ticks over `span`. */
export function niceStep(span: number, count: number): number {
  if (span <= 0) return 1;
  const raw = span / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const normalized = raw / magnitude;
  const nice = normalized <= 1 ? 1 : normalized <= 2 ? 2 : normalized <= 5 ? 5 : 10;
  return nice * magnitude;
}

function formatTick(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(1);
}

function stepPoints(series: LineSeries, step: number): (readonly [number, number])[] {
  return series.x.flatMap((x, i) => [[x, series.y[i] ?? 0] as const, [x + step, series.y[i] ?? 0] as const]);
}

function drawPanel(canvas: Canvas, top: number, height: number, panel: Panel): void {
  const left = 90;
  const right = canvas.width - 30;
  const plotTop = top + 62;
  const plotBottom = top + height - 56;
  const xs = panel.series.flatMap((series) => series.x.concat(series.x.map((x) => x + (series.step ?? 0)))).concat(panel.markers.map((marker) => marker.x));
  const ys = panel.series.flatMap((series) => series.y);
  const xMin = Math.min(...xs);
  const xMax = Math.max(...xs);
  const yStep = niceStep(Math.max(1, ...ys), 5);
  const yMax = Math.max(yStep, Math.ceil(Math.max(1, ...ys) / yStep) * yStep);
  const px = (x: number) => left + ((x - xMin) / Math.max(1e-9, xMax - xMin)) * (right - left);
  const py = (y: number) => plotBottom - (y / yMax) * (plotBottom - plotTop);

  canvas.text(left, top + 8, panel.title, INK, 2);
  for (let y = 0; y <= yMax + 1e-9; y += yStep) {
    canvas.line(left, py(y), right, py(y), GRID);
    canvas.text(left - 8, py(y) - 7, formatTick(y), MUTED, 2, 'right');
  }
  const xStep = niceStep(xMax - xMin, 10);
  for (let x = Math.ceil(xMin / xStep) * xStep; x <= xMax + 1e-9; x += xStep) {
    canvas.line(px(x), plotBottom, px(x), plotBottom + 5, INK);
    canvas.text(px(x), plotBottom + 10, formatTick(Math.round(x * 10) / 10), MUTED, 2, 'center');
  }
  canvas.line(left, plotTop, left, plotBottom, INK, 2);
  canvas.line(left, plotBottom, right, plotBottom, INK, 2);
  canvas.text((left + right) / 2, plotBottom + 30, panel.xLabel, INK, 2, 'center');

  for (const marker of panel.markers) {
    canvas.line(px(marker.x), plotTop, px(marker.x), plotBottom, marker.color, 2, 6);
    canvas.text(px(marker.x) + 6, plotTop + 8, marker.label, marker.color, 2);
  }
  for (const series of panel.series) {
    const points = series.step === undefined ? series.x.map((x, i) => [x, series.y[i] ?? 0] as const) : stepPoints(series, series.step);
    for (let i = 1; i < points.length; i++) {
      const [x0, y0] = points[i - 1] as readonly [number, number];
      const [x1, y1] = points[i] as readonly [number, number];
      canvas.line(px(x0), py(y0), px(x1), py(y1), series.color, 3);
    }
  }
  let legendX = left + 30;
  for (const series of panel.series) {
    canvas.fillRect(legendX - 28, top + 35, 22, 4, series.color);
    legendX += canvas.text(legendX, top + 30, series.label, series.color, 2) + 60;
  }
}

/** Renders panels stacked vertically under one title. */
export function renderChart(spec: ChartSpec): Canvas {
  const width = spec.width ?? 1000;
  const panelHeight = spec.panelHeight ?? 330;
  const header = spec.subtitle === undefined ? 50 : 76;
  const canvas = new Canvas(width, header + panelHeight * spec.panels.length);
  canvas.text(20, 16, spec.title, INK, 3);
  if (spec.subtitle !== undefined) canvas.text(20, 50, spec.subtitle, MUTED, 2);
  spec.panels.forEach((panel, index) => drawPanel(canvas, header + index * panelHeight, panelHeight, panel));
  return canvas;
}
