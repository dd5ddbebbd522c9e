import assert from 'node:assert/strict';
import { test } from 'node:test';
import { summarizeInjection } from './demo-inject.js';

const before = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template:
    spec:
      terminationGracePeriodSeconds: 30
      containers: [{name: app, image: x}]
`;

test('summarizeInjection: grace before -> after and each container\'s hook', () => {
  const after = `apiVersion: v1
kind: ConfigMap
metadata: {name: ignored}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template:
    spec:
      terminationGracePeriodSeconds: 60
      containers:
        - name: app
          lifecycle: {preStop: {httpGet: {host: 127.0.0.1, port: 9901, path: /v1/drain/x}}}
        - name: side
          lifecycle: {preStop: {sleep: {seconds: 45}}}
        - name: plain
`;
  assert.deepEqual(summarizeInjection(after, before), [
    'Deployment/web: terminationGracePeriodSeconds 30 -> 60',
    '  container app: preStop httpGet http://127.0.0.1:9901/v1/drain/x',
    '  container side: preStop sleep 45 s',
    '  container plain: no preStop hook',
  ]);
});
