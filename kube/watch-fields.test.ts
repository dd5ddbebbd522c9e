import { test } from 'node:test';
import assert from 'node:assert/strict';
import { POD_FIELDS } from '../src/pod/prune.js';
import { ListDecoder } from './list-decoder.js';
import { watchMasks } from './watch-fields.js';
import { isInitialEventsEnd } from './watch-list.js';

const masks = watchMasks({ metadata: { name: true } });

function event(line: unknown): { type?: string; object?: Record<string, unknown> } {
  return JSON.parse(masks.event.apply(Buffer.from(JSON.stringify(line)))) as { type?: string; object?: Record<string, unknown> };
}

test('watch fields: an ERROR event keeps its Status (code, reason, message, details) whatever the object mask', () => {
  const status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'too old resource version: 1 (5)', reason: 'Expired', code: 410, details: { causes: [{ message: 'x' }] } };
  const got = event({ type: 'ERROR', object: status });
  assert.equal(got.type, 'ERROR');
  assert.deepEqual(got.object, { kind: 'Status', apiVersion: 'v1', metadata: {}, message: status.message, reason: 'Expired', code: 410, details: status.details });
});

test('watch fields: a BOOKMARK keeps its resourceVersion and the initial-events-end annotation, not other annotations', () => {
  const got = event({ type: 'BOOKMARK', object: { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: '42', annotations: { 'k8s.io/initial-events-end': 'true', other: 'x' } }, spec: { containers: null } } });
  assert.equal(got.type, 'BOOKMARK');
  assert.deepEqual(got.object, { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: '42', annotations: { 'k8s.io/initial-events-end': 'true' } } });
  assert.equal(isInitialEventsEnd(got.object), true);
});

test('watch fields: the list decoder masks each item (the caller\'s fields and the protocol\'s), not the list metadata', () => {
  const items: unknown[] = [];
  const d = new ListDecoder((item) => items.push(item), undefined, watchMasks(POD_FIELDS).item);
  const pod = { kind: 'Pod', metadata: { name: 'a', resourceVersion: '7', managedFields: [{ manager: 'm' }], annotations: { 'conndrain.io/drain-ms': '1', 'kubectl.kubernetes.io/last-applied-configuration': '{}' } }, spec: { nodeName: 'n', containers: [] } };
  d.write(Buffer.from(JSON.stringify({ kind: 'PodList', metadata: { resourceVersion: '9', continue: 'c', extra: 1 }, items: [pod, pod] })));
  assert.deepEqual(d.end(), { resourceVersion: '9', continue: 'c' });
  const want = { kind: 'Pod', metadata: { name: 'a', resourceVersion: '7', annotations: { 'conndrain.io/drain-ms': '1' } }, spec: { nodeName: 'n' } };
  assert.deepEqual(items, [want, want]);
});
