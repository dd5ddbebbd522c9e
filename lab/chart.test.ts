import assert from 'node:assert/strict';
import { inflateSync } from 'node:zlib';
import { test } from 'node:test';
import { Canvas } from './chart/canvas.js';
import { renderChart, niceStep } from './chart/line-chart.js';
import { crc32, encodePng } from './chart/png.js';

test('crc32 matches the PNG specification\'s check value', () => {
  assert.equal(crc32(Buffer.from('123456789')), 0xcbf43926);
});

test('encodePng: signature, IHDR, and pixels that inflate back', () => {
  const canvas = new Canvas(3, 2, [10, 20, 30]);
  canvas.setPixel(2, 1, [255, 0, 0]);
  const png = encodePng(3, 2, canvas.data);
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  assert.equal(png.subarray(12, 16).toString('ascii'), 'IHDR');
  assert.equal(png.readUInt32BE(16), 3);
  assert.equal(png.readUInt32BE(20), 2);
  const idatLength = png.readUInt32BE(33);
  assert.equal(png.subarray(37, 41).toString('ascii'), 'IDAT');
  const raw = inflateSync(png.subarray(41, 41 + idatLength));
  assert.equal(raw.length, 2 * (1 + 9));
  assert.deepEqual([...raw.subarray(10 + 1 + 6, 10 + 1 + 9)], [255, 0, 0]);
});

test('renderChart draws the series colours onto a white canvas', () => {
  const canvas = renderChart({
    title: 'T',
    panels: [{ title: 'P', xLabel: 'x', series: [{ label: 'a', color: [214, 39, 40], x: [0, 1, 2], y: [1, 5, 2] }], markers: [{ x: 1, label: 'm', color: [0, 0, 0] }] }],
  });
  let red = 0;
  for (let i = 0; i < canvas.data.length; i += 3) if (canvas.data[i] === 214 && canvas.data[i + 1] === 39) red++;
  assert.ok(red > 100, `only ${red} red pixels`);
});

test('niceStep picks 1/2/5 steps', () => {
  assert.equal(niceStep(40, 5), 10);
  assert.equal(niceStep(9, 10), 1);
  assert.equal(niceStep(12, 5), 5);
});
