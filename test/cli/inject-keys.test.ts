/**
 * `conndrain inject` reports conndrain keys it does not know, as the webhook does: the same
 * injector (src/inject/keys.ts), so the same sentences, prefixed with the object they are on.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_INJECT_CONFIG } from '../../src/config/webhook.js';
import { seededRandom } from '../../src/inject/index.js';
import { injectManifests } from '../../cli/manifest/inject-manifests.js';

const MANIFESTS = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels: { app: web }
  template:
    metadata:
      labels: { app: web }
      annotations:
        conndrain.io/drain: "30s"
        conndrain.io/hok: agent     # misspelt
    spec:
      containers:
        - name: web
          image: web:1
---
apiVersion: v1
kind: Pod
metadata:
  name: api
  labels:
    conndrain.io/drain: "true"     # an annotation written as a label
spec:
  containers:
    - name: api
      image: api:1
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: nightly
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        metadata:
          annotations:
            conndrain.io/drain: "10s"
            conndrain.io/flow-pinning: "off"
        spec:
          restartPolicy: OnFailure
          containers:
            - name: job
              image: job:1
`;

test('inject warns about misspelt, misplaced and retired keys, names the object, and still injects what opted in', () => {
  const result = injectManifests(MANIFESTS, DEFAULT_INJECT_CONFIG, seededRandom(1));
  assert.equal(result.injected, 2, 'the Deployment and the CronJob opted in; the Pod did not (its opt-in is a label)');
  assert.equal(result.invalid, 0, 'a key problem is a warning, not an invalid annotation');
  assert.deepEqual(result.messages.filter((m) => !m.endsWith('drain hook injected into the pod template')), [
    'conndrain: deployment/web: unknown annotation "conndrain.io/hok" is ignored; did you mean conndrain.io/hook?',
    'conndrain: pod/api: "conndrain.io/drain" is set as a label; conndrain reads annotations only: write it as the annotation conndrain.io/drain',
    'conndrain: cronjob/nightly: annotation conndrain.io/flow-pinning is retired: flow pinning acts per IPVS service on every node, so it is switched off per Service: label the Service conndrain.io/flow-pinning=off instead',
  ]);
});
