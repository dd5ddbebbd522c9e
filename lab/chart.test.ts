import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { pointsOf, renderChartSvg, type ChartSpec } from './chart/line-chart.js';
import { ghostChart, type GhostResult } from './report/ghost-report.js';

const RED = '#d62728';
const BLUE = '#1f77b4';

/** The vertices of the plotted line drawn in `color` (a series line, not its legend swatch). */
function lineVertices(svg: string, color: string): [number, number][] {
  const paths = [...svg.matchAll(/<path ([^>]*)\/>/g)].map((match) => match[1] ?? '').filter((attributes) => attributes.includes(`stroke="${color}"`) && !attributes.includes('transform='));
  assert.equal(paths.length, 1, `one line drawn in ${color}`);
  const d = /\bd="([^"]*)"/.exec(paths[0] ?? '')?.[1] ?? '';
  return [...d.matchAll(/[ML](-?[\d.]+),(-?[\d.]+)/g)].map((m) => [Number(m[1]), Number(m[2])]);
}

function texts(svg: string): string[] {
  return [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((match) => match[1] ?? '');
}

const SPEC: ChartSpec = {
  title: 'Chart title',
  subtitle: 'a subtitle',
  panels: [
    {
      title: 'first panel',
      xLabel: 'seconds',
      series: [
        { label: 'linear', color: RED, x: [0, 1, 2], y: [1, 5, 2] },
        { label: 'bucketed', color: BLUE, x: [0, 1, 2], y: [3, 3, 0], step: 1 },
      ],
      markers: [{ x: 1, label: 'deleted', color: '#000000' }],
    },
    { title: 'second panel', xLabel: 'seconds', series: [{ label: 'other', color: '#2ca02c', x: [0, 3], y: [2, 2] }], markers: [] },
  ],
};

test('pointsOf closes a bucketed series at its last bucket\'s end and leaves a plain one as is', () => {
  assert.deepEqual(pointsOf({ label: 'a', color: RED, x: [0, 0.25], y: [4, 7], step: 0.25 }), [{ x: 0, y: 4 }, { x: 0.25, y: 7 }, { x: 0.5, y: 7 }]);
  assert.deepEqual(pointsOf({ label: 'a', color: RED, x: [0, 1], y: [4, 7] }), [{ x: 0, y: 4 }, { x: 1, y: 7 }]);
});

test('renderChartSvg draws each series through its points, in order, scaled to the plot', async () => {
  const svg = await renderChartSvg(SPEC);
  assert.match(svg, /^<svg [^>]*width="(\d+)" height="(\d+)"/);
  const [, width, height] = /^<svg [^>]*width="(\d+)" height="(\d+)"/.exec(svg) ?? [];
  assert.ok(Number(width) >= 1000 && Number(height) >= 2 * 330, `${width} x ${height}`);

  const linear = lineVertices(svg, RED);
  assert.equal(linear.length, 3);
  assert.ok(linear[0]![0] < linear[1]![0] && linear[1]![0] < linear[2]![0], 'x grows along the series');
  assert.ok(linear[1]![1] < linear[2]![1] && linear[2]![1] < linear[0]![1], 'y=5 is drawn highest, then 2, then 1');

  // step-after through (0,3) (1,3) (2,0) (3,0): a horizontal and a vertical segment per bucket
  const steps = lineVertices(svg, BLUE);
  assert.equal(steps.length, 2 * 4 - 1);
  assert.equal(new Set(steps.slice(0, 4).map(([, y]) => y)).size, 1, 'flat while the count stays 3');
  assert.ok(steps[5]![1] > steps[0]![1], 'drops to 0 in the third bucket');
  assert.ok(steps.at(-1)![0] > linear.at(-1)![0], 'the bucketed series ends one bucket later (x=3)');

  assert.equal(lineVertices(svg, '#2ca02c').length, 2, 'the second panel has its own line');
  const labels = texts(svg);
  for (const text of ['Chart title', 'a subtitle', 'first panel', 'second panel', 'deleted', 'linear', 'bucketed', 'other', 'seconds']) {
    assert.ok(labels.includes(text), `text "${text}" is drawn`);
  }
});

test('the ghost chart of the committed results shows both runs in both panels', async () => {
  const file = JSON.parse(readFileSync(new URL('../docs/lab-results/ghost.json', import.meta.url), 'utf8')) as { result: GhostResult };
  const svg = await renderChartSvg(ghostChart(file.result));
  // UDP and TCP panels, each with the run without (red) and with (blue) conndrain
  const lines = [...svg.matchAll(/<path ([^>]*)\/>/g)].map((match) => match[1] ?? '').filter((a) => !a.includes('transform='));
  assert.equal(lines.filter((a) => a.includes(`stroke="${RED}"`)).length, 2);
  assert.equal(lines.filter((a) => a.includes(`stroke="${BLUE}"`)).length, 2);
  for (const text of ['without conndrain', 'with conndrain', 'unready', 'deleted', 'Ghost conntrack after a scale-down']) assert.ok(texts(svg).includes(text), text);
});
