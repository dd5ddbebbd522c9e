/**
 * A managed pod as the API server really returns it, ~6 KB of JSON: managedFields of three
 * managers, a container with env, probes, resources and mounts, the projected service-account
 * volume, tolerations, five conditions and a container status. The agent must not keep any
 * of this (bench/agent measures its RSS with 10,000 of them in its cache).
 */
import { managedPod, type ManagedPodOptions } from '../../test/apiserver/pods.js';
import type { JsonObject } from '../../test/apiserver/server.js';

const fieldsV1 = (n: number): Record<string, unknown> => {
  const out: Record<string, unknown> = {};
  for (let i = 0; i < n; i++) out[`f:field-${i}`] = { '.': {}, 'f:name': {}, 'f:value': {} };
  return out;
};

export function fatPod(o: ManagedPodOptions, i: number): JsonObject {
  const pod = managedPod(o) as JsonObject & { metadata: Record<string, unknown>; spec: Record<string, unknown>; status: Record<string, unknown> };
  const ts = '2026-12-01T10:00:00Z';
  pod.metadata.generateName = `${o.name.slice(0, -2)}-`;
  pod.metadata.ownerReferences = [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `shop-7d9f8c${i % 97}`, uid: `0b6a1d2e-1111-4a3b-9c1d-${String(i).padStart(12, '0')}`, controller: true, blockOwnerDeletion: true }];
  (pod.metadata.labels as Record<string, string>)['pod-template-hash'] = `7d9f8c${i % 97}`;
  (pod.metadata.annotations as Record<string, string>)['kubectl.kubernetes.io/restartedAt'] = ts;
  pod.metadata.managedFields = [
    { manager: 'kube-controller-manager', operation: 'Update', apiVersion: 'v1', time: ts, fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': fieldsV1(6), 'f:spec': fieldsV1(14) } },
    { manager: 'kubelet', operation: 'Update', apiVersion: 'v1', time: ts, fieldsType: 'FieldsV1', subresource: 'status', fieldsV1: { 'f:status': fieldsV1(12) } },
    { manager: 'conndrain-webhook', operation: 'Update', apiVersion: 'v1', time: ts, fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': fieldsV1(3) } },
  ];
  pod.spec.containers = [{
    name: 'app', image: 'registry.example/shop/app:1.42.7', imagePullPolicy: 'IfNotPresent',
    ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }, { name: 'metrics', containerPort: 9090, protocol: 'TCP' }],
    env: Array.from({ length: 10 }, (_, k) => ({ name: `SHOP_SETTING_${k}`, value: `value-${k}-${i}` })),
    resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '256Mi' } },
    readinessProbe: { httpGet: { path: '/ready', port: 8080, scheme: 'HTTP' }, periodSeconds: 5, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3 },
    livenessProbe: { httpGet: { path: '/live', port: 8080, scheme: 'HTTP' }, periodSeconds: 10, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3 },
    lifecycle: { preStop: { httpGet: { path: `/v1/drain/drain-${o.name}`, port: 9901, host: '127.0.0.1', scheme: 'HTTP' } } },
    volumeMounts: [{ name: 'kube-api-access', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true }],
    terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File',
  }];
  pod.spec.volumes = [{ name: 'kube-api-access', projected: { defaultMode: 420, sources: [{ serviceAccountToken: { expirationSeconds: 3607, path: 'token' } }, { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } }, { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } }] } }];
  pod.spec.tolerations = [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }, { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }];
  Object.assign(pod.spec, { restartPolicy: 'Always', dnsPolicy: 'ClusterFirst', serviceAccountName: 'shop', schedulerName: 'default-scheduler', enableServiceLinks: true, preemptionPolicy: 'PreemptLowerPriority', priority: 0 });
  pod.status.conditions = ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({ type, status: 'True', lastProbeTime: null, lastTransitionTime: ts }));
  Object.assign(pod.status, { hostIP: `192.168.${(i >> 8) & 255}.${i & 255}`, hostIPs: [{ ip: `192.168.${(i >> 8) & 255}.${i & 255}` }], startTime: ts, qosClass: 'Burstable' });
  pod.status.containerStatuses = [{ name: 'app', state: { running: { startedAt: ts } }, lastState: {}, ready: true, restartCount: 0, image: 'registry.example/shop/app:1.42.7', imageID: `registry.example/shop/app@sha256:${'ab'.repeat(32)}`, containerID: `containerd://${'cd'.repeat(32)}`, started: true, volumeMounts: [{ name: 'kube-api-access', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true, recursiveReadOnly: 'Disabled' }] }];
  return pod;
}
