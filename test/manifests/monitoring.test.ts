/** The ServiceMonitors find a Service, a named port on it, and scrape it the way it serves. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AGENT_OPTIONS } from '../../src/config/agent.js';
import { WEBHOOK_OPTIONS } from '../../src/config/webhook.js';
import type { IService } from 'kubernetes-models/v1/Service';
import { intOption, parseArgs } from './cli-args.js';
import { AGENT_DAEMONSET, daemonSet, deployment, onlyContainer, WEBHOOK_CERTIFICATE, WEBHOOK_DEPLOYMENT } from './objects.js';
import { KUBECTL_MISSING, pick, render } from './render.js';

interface Endpoint {
  port: string;
  path?: string;
  scheme?: string;
  tlsConfig?: { serverName?: string; ca?: { secret?: { name: string; key: string } }; insecureSkipVerify?: boolean };
  bearerTokenFile?: string;
  authorization?: { credentials?: { name: string; key: string } };
  relabelings?: { sourceLabels?: string[]; targetLabel?: string }[];
}
interface ServiceMonitor {
  metadata: { name: string; namespace: string };
  spec: { selector: { matchLabels: Record<string, string> }; namespaceSelector?: { matchNames?: string[] }; endpoints: Endpoint[] };
}

function matches(service: IService, labels: Record<string, string>): boolean {
  return Object.entries(labels).every(([k, v]) => service.metadata?.labels?.[k] === v);
}

describe('ServiceMonitors', { skip: KUBECTL_MISSING }, () => {
  const objects = KUBECTL_MISSING === undefined ? render('manifests/overlays/monitoring') : [];
  const monitors = objects.filter((o) => o.kind === 'ServiceMonitor') as unknown as ServiceMonitor[];
  const services = objects.filter((o) => o.kind === 'Service') as unknown as IService[];

  it('one for the webhook, one for the agent', () => {
    assert.deepEqual(monitors.map((m) => m.metadata.name).sort(), ['conndrain-agent', 'conndrain-webhook']);
  });

  for (const monitor of monitors) {
    it(`${monitor.metadata.name}: selects exactly one Service in its namespace, on a port it has`, () => {
      const selected = services.filter((s) => (monitor.spec.namespaceSelector?.matchNames ?? [monitor.metadata.namespace]).includes(s.metadata?.namespace ?? '') && matches(s, monitor.spec.selector.matchLabels));
      assert.equal(selected.length, 1, `selects ${selected.map((s) => s.metadata?.name ?? '').join(', ')}`);
      for (const endpoint of monitor.spec.endpoints) assert.ok(selected[0]?.spec?.ports?.some((p) => p.name === endpoint.port), `no port ${endpoint.port}`);
    });
  }

  it('scrapes the webhook over HTTPS, verified against its CA, on --port', () => {
    const endpoint = monitors.find((m) => m.metadata.name === 'conndrain-webhook')?.spec.endpoints[0];
    assert.equal(endpoint?.scheme, 'https');
    assert.deepEqual(endpoint?.tlsConfig?.ca?.secret, { name: (pick(objects, 'Certificate', WEBHOOK_CERTIFICATE).spec as { secretName: string }).secretName, key: 'ca.crt' });
    const certificate = pick(objects, 'Certificate', WEBHOOK_CERTIFICATE).spec as { dnsNames: string[] };
    assert.ok(certificate.dnsNames.includes(endpoint?.tlsConfig?.serverName ?? ''));
    const container = onlyContainer(deployment(objects, WEBHOOK_DEPLOYMENT));
    const service = services.find((s) => s.metadata?.name === 'conndrain-webhook');
    const target = service?.spec?.ports?.find((p) => p.name === endpoint?.port)?.targetPort;
    assert.equal(container.ports?.find((p) => p.name === target)?.containerPort, intOption(parseArgs(container.args ?? [], WEBHOOK_OPTIONS), WEBHOOK_OPTIONS.port));
  });

  it('scrapes both over HTTPS with a bearer token for the API server to review (--metrics-secure), bound to the metrics reader', () => {
    for (const monitor of monitors) {
      for (const endpoint of monitor.spec.endpoints) {
        assert.equal(endpoint.scheme, 'https', monitor.metadata.name);
        assert.ok(endpoint.bearerTokenFile !== undefined || endpoint.authorization?.credentials !== undefined, `${monitor.metadata.name}: no token`);
      }
    }
    const agent = monitors.find((m) => m.metadata.name === 'conndrain-agent')?.spec.endpoints[0];
    assert.equal(agent?.tlsConfig?.insecureSkipVerify, true, 'each agent\'s certificate is self-signed');
    const binding = objects.find((o) => o.kind === 'ClusterRoleBinding' && (o.roleRef as { name: string }).name === 'conndrain-metrics-reader');
    assert.ok(binding !== undefined, 'a scraper is bound to conndrain-metrics-reader');
  });

  it('scrapes the agents on --metrics-port and labels them with their node', () => {
    const endpoint = monitors.find((m) => m.metadata.name === 'conndrain-agent')?.spec.endpoints[0];
    const service = services.find((s) => s.metadata?.name === 'conndrain-agent-metrics');
    assert.equal(service?.spec?.clusterIP, 'None');
    const container = onlyContainer(daemonSet(objects, AGENT_DAEMONSET));
    const target = service?.spec?.ports?.find((p) => p.name === endpoint?.port)?.targetPort;
    // A number: the agent declares no container ports (docs/handover.md: they would be host ports).
    assert.equal(target, intOption(parseArgs(container.args ?? [], AGENT_OPTIONS), AGENT_OPTIONS.metricsPort));
    assert.ok(endpoint?.relabelings?.some((r) => r.targetLabel === 'node' && r.sourceLabels?.includes('__meta_kubernetes_pod_node_name')));
  });
});
