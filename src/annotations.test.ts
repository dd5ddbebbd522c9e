import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDrainRequest, type DrainRequest } from './annotations.js';

const A = (annotations: Record<string, string>): DrainRequest => parseDrainRequest(annotations);

test('no drain annotation, or "false", means off', () => {
  assert.deepEqual(parseDrainRequest(undefined), { kind: 'off' });
  assert.deepEqual(A({}), { kind: 'off' });
  assert.deepEqual(A({ 'conndrain.io/drain': 'false' }), { kind: 'off' });
  assert.deepEqual(A({ 'conndrain.io/drain': ' FALSE ', 'conndrain.io/hook': 'bogus' }), { kind: 'off' });
  assert.deepEqual(A({ 'conndrain.io/hook': 'agent' }), { kind: 'off' });
});

test('"true" takes the default drain and the contract defaults', () => {
  assert.deepEqual(A({ 'conndrain.io/drain': 'true' }), {
    kind: 'on',
    settings: { drainMs: 30_000, minDrainMs: 5000, shutdownGraceMs: 10_000, containers: null, hook: null },
  });
});

test('every annotation parsed: Go durations, plain seconds, containers deduplicated, hook kind', () => {
  const parsed = A({
    'conndrain.io/drain': '1m30s',
    'conndrain.io/min-drain': '45',
    'conndrain.io/shutdown-grace': '500ms',
    'conndrain.io/containers': ' app , proxy,app',
    'conndrain.io/hook': 'agent',
  });
  assert.deepEqual(parsed, { kind: 'on', settings: { drainMs: 90_000, minDrainMs: 45_000, shutdownGraceMs: 500, containers: ['app', 'proxy'], hook: 'agent' } });
});

test('a short drain lowers the default min-drain instead of failing', () => {
  const parsed = A({ 'conndrain.io/drain': '2s' });
  assert.equal(parsed.kind, 'on');
  if (parsed.kind === 'on') assert.equal(parsed.settings.minDrainMs, 2000);
});

test('limits come from config: the default drain and the maximum', () => {
  const limits = { defaultDrainMs: 12_000, maxDurationMs: 60_000 };
  const on = parseDrainRequest({ 'conndrain.io/drain': 'true' }, limits);
  assert.equal(on.kind === 'on' && on.settings.drainMs, 12_000);
  const over = parseDrainRequest({ 'conndrain.io/drain': '61s' }, limits);
  assert.equal(over.kind, 'invalid');
  if (over.kind === 'invalid') assert.match(over.problems[0]?.message ?? '', /longer than the maximum 1m; .* up to 1m/);
});

test('every rejection names the annotation, the value and what is accepted', () => {
  const cases: Array<[Record<string, string>, string, string, RegExp]> = [
    [{ 'conndrain.io/drain': 'abc' }, 'invalid-duration', 'conndrain.io/drain', /"abc" is not a duration; expected a duration like 30s.*or "true"/],
    [{ 'conndrain.io/drain': '-1s' }, 'invalid-duration', 'conndrain.io/drain', /negative duration/],
    [{ 'conndrain.io/drain': '0' }, 'zero-drain', 'conndrain.io/drain', /a drain of zero does nothing/],
    [{ 'conndrain.io/drain': '3h' }, 'above-maximum', 'conndrain.io/drain', /longer than the maximum 1h/],
    [{ 'conndrain.io/drain': '10s', 'conndrain.io/min-drain': '11s' }, 'min-drain-above-drain', 'conndrain.io/min-drain', /longer than conndrain.io\/drain \(10s\)/],
    [{ 'conndrain.io/drain': '10s', 'conndrain.io/shutdown-grace': 'x' }, 'invalid-duration', 'conndrain.io/shutdown-grace', /is not a duration/],
    [{ 'conndrain.io/drain': '10s', 'conndrain.io/hook': 'Sleep' }, 'unknown-hook', 'conndrain.io/hook', /expected one of agent, sleep, exec/],
    [{ 'conndrain.io/drain': '10s', 'conndrain.io/containers': 'ok,Not_OK' }, 'invalid-containers', 'conndrain.io/containers', /"Not_OK" is not a container name/],
    [{ 'conndrain.io/drain': '10s', 'conndrain.io/containers': ',' }, 'invalid-containers', 'conndrain.io/containers', /the list names no container/],
  ];
  for (const [annotations, code, annotation, message] of cases) {
    const parsed = A(annotations);
    assert.equal(parsed.kind, 'invalid', JSON.stringify(annotations));
    if (parsed.kind !== 'invalid') continue;
    assert.equal(parsed.problems.length, 1, JSON.stringify(parsed.problems));
    const [p] = parsed.problems;
    assert.equal(p?.code, code);
    assert.equal(p?.annotation, annotation);
    assert.equal(p?.value, annotations[annotation]);
    assert.ok(p?.message.startsWith(`annotation ${annotation}="${annotations[annotation]}": `), p?.message);
    assert.match(p?.message ?? '', message);
  }
});

test('all problems are reported at once', () => {
  const parsed = A({ 'conndrain.io/drain': 'x', 'conndrain.io/min-drain': 'y', 'conndrain.io/hook': 'z', 'conndrain.io/containers': 'A' });
  assert.equal(parsed.kind, 'invalid');
  if (parsed.kind === 'invalid') {
    assert.deepEqual(parsed.problems.map((p) => p.annotation), ['conndrain.io/drain', 'conndrain.io/min-drain', 'conndrain.io/containers', 'conndrain.io/hook']);
  }
});

test('non-string annotation values from untrusted JSON never throw and count as absent', () => {
  const weird = { 'conndrain.io/drain': 30, 'conndrain.io/hook': null } as unknown as Record<string, string>;
  assert.deepEqual(parseDrainRequest(weird), { kind: 'off' });
  const half = { 'conndrain.io/drain': '30s', 'conndrain.io/hook': ['agent'] } as unknown as Record<string, string>;
  assert.equal(parseDrainRequest(half).kind, 'on');
});
