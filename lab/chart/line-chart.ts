import { parse, View, type GroupMark, type LineMark, type Spec } from 'vega';

export interface LineSeries {
  label: string;
  /** A CSS colour. */
  color: string;
  x: readonly number[];
  y: readonly number[];
  /** Draw as steps of this width (a bucketed count: each x is the start of its bucket). */
  step?: number;
}

/** A vertical line at x (an event: pod unready, pod deleted, node down). */
export interface Marker {
  x: number;
  label: string;
  color: string;
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

const INK = '#1e1e1e';
const MUTED = '#6e6e6e';
/** Room above each plot for its title and legend, and below it for the x axis. */
const PANEL_TOP = 56;
const PANEL_BOTTOM = 52;
const LEFT = 60;

interface Point {
  x: number;
  y: number;
}

/** The points a series is drawn through: a bucketed series gets its last bucket's end. */
export function pointsOf(series: LineSeries): Point[] {
  const points = series.x.map((x, i) => ({ x, y: series.y[i] ?? 0 }));
  const last = points.at(-1);
  if (series.step !== undefined && last !== undefined) points.push({ x: last.x + series.step, y: last.y });
  return points;
}

function xDomainOf(spec: ChartSpec): [number, number] {
  const xs = spec.panels.flatMap((panel) => panel.series.flatMap((series) => pointsOf(series).map((point) => point.x)).concat(panel.markers.map((marker) => marker.x)));
  return xs.length === 0 ? [0, 1] : [Math.min(...xs), Math.max(...xs)];
}

/** One panel: a group with its own y scale, axes, legend, lines and event markers. */
function panelMark(panel: Panel, index: number, plotWidth: number, plotHeight: number, panelHeight: number): GroupMark {
  const name = `panel${index}`;
  const data = [
    ...panel.series.map((series, s) => ({ name: `${name}_series${s}`, values: pointsOf(series) })),
    { name: `${name}_markers`, values: panel.markers.map((marker) => ({ ...marker })) },
  ];
  const yMax = Math.max(1, ...panel.series.flatMap((series) => series.y));
  return {
    type: 'group',
    name,
    encode: { enter: { x: { value: LEFT }, y: { value: index * panelHeight + PANEL_TOP }, width: { value: plotWidth }, height: { value: plotHeight } } },
    title: { text: panel.title, anchor: 'start', offset: 30, fontSize: 14, color: INK },
    data,
    scales: [
      { name: 'y', type: 'linear', domain: [0, yMax], nice: true, zero: true, range: [plotHeight, 0] },
      { name: 'color', type: 'ordinal', domain: panel.series.map((series) => series.label), range: panel.series.map((series) => series.color) },
    ],
    axes: [
      { orient: 'bottom', scale: 'x', title: panel.xLabel, tickCount: 10, labelColor: MUTED, titleColor: INK },
      { orient: 'left', scale: 'y', grid: true, tickCount: 5, labelColor: MUTED, domainColor: INK },
    ],
    legends: [{ stroke: 'color', orient: 'top', direction: 'horizontal', symbolType: 'stroke', labelColor: INK }],
    marks: [
      {
        type: 'rule',
        name: `${name}_rules`,
        from: { data: `${name}_markers` },
        encode: { enter: { x: { scale: 'x', field: 'x' }, y: { value: 0 }, y2: { value: plotHeight }, stroke: { field: 'color' }, strokeWidth: { value: 2 }, strokeDash: { value: [6, 4] } } },
      },
      {
        type: 'text',
        from: { data: `${name}_markers` },
        encode: { enter: { x: { scale: 'x', field: 'x', offset: 5 }, y: { value: 12 }, text: { field: 'label' }, fill: { field: 'color' }, fontSize: { value: 12 } } },
      },
      ...panel.series.map((series, s): LineMark => ({
        type: 'line',
        name: `${name}_line${s}`,
        description: series.label,
        from: { data: `${name}_series${s}` },
        encode: {
          enter: {
            x: { scale: 'x', field: 'x' },
            y: { scale: 'y', field: 'y' },
            stroke: { value: series.color },
            strokeWidth: { value: 2.5 },
            interpolate: { value: series.step === undefined ? 'linear' : 'step-after' },
          },
        },
      })),
    ],
  };
}

/** The Vega specification of panels stacked vertically under one title, sharing the x axis. */
export function chartSpecToVega(spec: ChartSpec): Spec {
  const width = spec.width ?? 1000;
  const panelHeight = spec.panelHeight ?? 330;
  const plotWidth = width - LEFT - 30;
  const plotHeight = panelHeight - PANEL_TOP - PANEL_BOTTOM;
  return {
    $schema: 'https://vega.github.io/schema/vega/v6.json',
    width,
    height: panelHeight * spec.panels.length,
    padding: 10,
    autosize: 'pad',
    background: 'white',
    title: { text: spec.title, ...(spec.subtitle === undefined ? {} : { subtitle: spec.subtitle }), anchor: 'start', fontSize: 18, color: INK, subtitleColor: MUTED },
    scales: [{ name: 'x', type: 'linear', domain: xDomainOf(spec), range: [0, plotWidth], zero: false }],
    marks: spec.panels.map((panel, index) => panelMark(panel, index, plotWidth, plotHeight, panelHeight)),
  };
}

/** Renders the chart to a standalone SVG document (Vega, headless: no browser, no canvas). */
export async function renderChartSvg(spec: ChartSpec): Promise<string> {
  const view = new View(parse(chartSpecToVega(spec)), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
