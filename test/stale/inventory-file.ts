import { writeFileSync } from 'node:fs';

/** Writes a `kubectl get endpointslices,pods -A -o json`-shaped List. */
export function writeInventory(path: string, items: unknown[]): void {
  writeFileSync(path, JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
}

export function sliceObject(namespace: string, service: string, ports: Array<{ port: number; protocol: string }>, endpoints: Array<{ ip: string; ready: boolean; serving: boolean; terminating: boolean }>): unknown {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `${service}-abc`, namespace, labels: { 'kubernetes.io/service-name': service } },
    addressType: 'IPv4',
    ports: ports.map((p) => ({ name: '', ...p })),
    endpoints: endpoints.map((e) => ({ addresses: [e.ip], conditions: { ready: e.ready, serving: e.serving, terminating: e.terminating } })),
  };
}

export function podObject(namespace: string, name: string, nodeName: string, ip: string, phase = 'Running'): unknown {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace }, spec: { nodeName }, status: { phase, podIP: ip, podIPs: [{ ip }] } };
}
