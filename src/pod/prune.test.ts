import { test } from 'node:test';
import assert from 'node:assert/strict';
import { prunePod } from './prune.js';
import { viewPod } from './view.js';
import type { PodLike } from './pod-like.js';

test('prunePod keeps what the agent reads, drops the rest, and views the same', () => {
  const pod = {
    metadata: {
      name: 'web-0', namespace: 'shop', uid: 'u1', resourceVersion: '7',
      labels: { app: 'web', 'conndrain.io/managed': 'true' },
      annotations: { 'conndrain.io/drain': '30s', 'conndrain.io/drain-id': 'abc', 'kubectl.kubernetes.io/last-applied-configuration': 'x'.repeat(5000) },
      deletionTimestamp: '2026-01-01T00:00:30Z', deletionGracePeriodSeconds: 30,
      managedFields: [{ manager: 'kubelet' }],
    },
    spec: { nodeName: 'n1', containers: [{ name: 'app', image: 'x' }], volumes: [] },
    status: { phase: 'Running', podIP: '10.0.0.1', podIPs: [{ ip: '10.0.0.1' }, { ip: 'fd00::1' }], conditions: [{ type: 'PodScheduled', status: 'True' }, { type: 'Ready', status: 'False', lastTransitionTime: 'x' }], containerStatuses: [{}] },
  } as PodLike;
  const pruned = prunePod(pod);
  assert.deepEqual(viewPod(pruned, 1000), viewPod(pod, 1000));
  assert.deepEqual(pruned.metadata?.labels, { 'conndrain.io/managed': 'true' });
  assert.deepEqual(Object.keys(pruned.metadata?.annotations ?? {}), ['conndrain.io/drain', 'conndrain.io/drain-id']);
  assert.ok(JSON.stringify(pruned).length < 700, `${JSON.stringify(pruned).length} bytes`);
});
