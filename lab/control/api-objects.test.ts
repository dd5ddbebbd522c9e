/**
 * The scenarios' Namespace and Service on the API stand-in: the ghost and DSR services give
 * slices of their pods with the service's target ports, under kube-proxy's selector, in an
 * opted-in Namespace.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeApiServer } from '../../test/apiserver/server.js';
import { managedPod } from '../../test/apiserver/pods.js';
import { matchesLabelSelector } from '../../test/apiserver/selectors.js';
import { NAMESPACE_INJECT_LABEL } from '../../src/contract.js';
import { GHOST_CLUSTER_IP, GHOST_NAMESPACE, SURVIVOR, VICTIM, ghostService } from '../scenarios/ghost-plan.js';
import { kubeService } from './api-objects.js';

describe('lab workload objects', () => {
  it('the ghost Service selects the scenario\'s pods: one IPv4 slice with both, the UDP and TCP target ports', () => {
    const api = new FakeApiServer();
    const state = ghostService([SURVIVOR, VICTIM]);
    api.putNamespace(GHOST_NAMESPACE, { [NAMESPACE_INJECT_LABEL]: 'enabled' });
    const svc = api.putService(kubeService(GHOST_NAMESPACE, state));
    assert.equal((svc.spec as { clusterIP: string }).clusterIP, GHOST_CLUSTER_IP);
    for (const pod of [SURVIVOR, VICTIM]) api.putPod(managedPod({ name: pod.name, namespace: GHOST_NAMESPACE, nodeName: 'node-1', ips: [pod.ip], app: state.name }));
    const slices = api.listEndpointSlices() as Array<{ metadata: { labels: Record<string, string> }; endpoints: Array<{ addresses: string[] }>; ports: unknown[] }>;
    assert.equal(slices.length, 1);
    assert.ok(matchesLabelSelector('!service.kubernetes.io/headless,!service.kubernetes.io/service-proxy-name', slices[0]?.metadata.labels));
    assert.deepEqual(slices[0]?.endpoints.map((e) => e.addresses[0]).sort(), [SURVIVOR.ip, VICTIM.ip].sort());
    assert.deepEqual(slices[0]?.ports, [{ name: 'dns', protocol: 'UDP', port: 53 }, { name: 'http', protocol: 'TCP', port: 80 }]);
    assert.equal(api.listNamespaces()[0]?.metadata?.labels?.[NAMESPACE_INJECT_LABEL], 'enabled');
  });
});
