/**
 * A realistic AdmissionReview: the pod a ReplicaSet controller creates for a Deployment with
 * three containers (app, cache sidecar, log shipper), probes, resources, env, volumes, the
 * projected service-account token, ownerReferences and managedFields (~8 KB, like a real one).
 */
export function realisticReview(uid: string): Record<string, unknown> {
  const container = (name: string, image: string, port: number): Record<string, unknown> => ({
    name,
    image,
    imagePullPolicy: 'IfNotPresent',
    ports: [{ name: 'http', containerPort: port, protocol: 'TCP' }],
    env: [
      { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
      { name: 'POD_IP', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'status.podIP' } } },
      { name: 'LOG_LEVEL', value: 'info' },
      { name: 'DATABASE_URL', valueFrom: { secretKeyRef: { name: 'checkout-db', key: 'url' } } },
    ],
    resources: { requests: { cpu: '250m', memory: '256Mi' }, limits: { memory: '512Mi' } },
    readinessProbe: { httpGet: { path: '/ready', port, scheme: 'HTTP' }, periodSeconds: 5, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3 },
    livenessProbe: { httpGet: { path: '/live', port, scheme: 'HTTP' }, periodSeconds: 10, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3 },
    volumeMounts: [
      { name: 'config', mountPath: '/etc/checkout', readOnly: true },
      { name: 'kube-api-access-x7k2p', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true },
    ],
    securityContext: { allowPrivilegeEscalation: false, runAsNonRoot: true, capabilities: { drop: ['ALL'] } },
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File',
  });
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: 'checkout-7d9f8b6c5d-',
      namespace: 'shop',
      labels: { app: 'checkout', 'app.kubernetes.io/part-of': 'shop', 'pod-template-hash': '7d9f8b6c5d', tier: 'backend' },
      annotations: {
        'conndrain.io/drain': '30s',
        'conndrain.io/min-drain': '5s',
        'conndrain.io/hook': 'agent',
        'conndrain.io/containers': 'app,cache',
        'kubectl.kubernetes.io/restartedAt': '2026-11-30T10:00:00Z',
        'prometheus.io/scrape': 'true',
        'prometheus.io/port': '9090',
      },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'checkout-7d9f8b6c5d', uid: '3f1c6a52-6a1e-4a0f-9f0e-1b2c3d4e5f60', controller: true, blockOwnerDeletion: true }],
      managedFields: [{
        manager: 'kube-controller-manager', operation: 'Update', apiVersion: 'v1', time: '2026-12-02T10:00:00Z', fieldsType: 'FieldsV1',
        fieldsV1: { 'f:metadata': { 'f:annotations': { '.': {}, 'f:conndrain.io/drain': {}, 'f:conndrain.io/hook': {} }, 'f:generateName': {}, 'f:labels': { '.': {}, 'f:app': {} }, 'f:ownerReferences': { '.': {}, 'k:{"uid":"3f1c6a52-6a1e-4a0f-9f0e-1b2c3d4e5f60"}': {} } }, 'f:spec': { 'f:containers': { 'k:{"name":"app"}': { '.': {}, 'f:image': {}, 'f:name': {} } } } },
      }],
    },
    spec: {
      containers: [container('app', 'registry.example/shop/checkout:1.4.2', 8080), container('cache', 'registry.example/shop/cache:7.2', 6379), container('log-shipper', 'registry.example/ops/shipper:3.1', 2020)],
      volumes: [
        { name: 'config', configMap: { name: 'checkout-config', defaultMode: 420 } },
        { name: 'kube-api-access-x7k2p', projected: { defaultMode: 420, sources: [{ serviceAccountToken: { expirationSeconds: 3607, path: 'token' } }, { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } }, { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } }] } },
      ],
      restartPolicy: 'Always',
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'checkout',
      securityContext: { seccompProfile: { type: 'RuntimeDefault' } },
      schedulerName: 'default-scheduler',
      tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }],
      priority: 0,
      enableServiceLinks: true,
      preemptionPolicy: 'PreemptLowerPriority',
    },
  };
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      requestKind: { group: '', version: 'v1', kind: 'Pod' },
      requestResource: { group: '', version: 'v1', resource: 'pods' },
      namespace: 'shop',
      operation: 'CREATE',
      userInfo: { username: 'system:serviceaccount:kube-system:replicaset-controller', uid: '6a1e9b7c-1d2e-4f3a-8b9c-0d1e2f3a4b5c', groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated'] },
      object: pod,
      oldObject: null,
      dryRun: false,
      options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' },
    },
  };
}
