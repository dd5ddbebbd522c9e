/**
 * What a scenario puts on the API stand-in besides its pods, as a cluster would have it: the
 * workload's Namespace opted in to conndrain (`conndrain.io/inject=enabled`) and its Service,
 * selecting the pods by their `app` label (managedPod's, the Service's name here), so the
 * stand-in's EndpointSlice controller derives slices from the pods as Kubernetes' does.
 */
import { NAMESPACE_INJECT_LABEL } from '../../src/contract.js';
import { service } from '../../test/apiserver/cluster-objects.js';
import type { ServiceState } from '../proxy/service.js';
import type { ApiHandle } from './api-handle.js';

/** The Kubernetes Service of a lab service: its address as clusterIP, ports with numeric targetPorts. */
export function kubeService(namespace: string, state: ServiceState): Record<string, unknown> {
  const object = service({
    name: state.name,
    namespace,
    selector: { app: state.name },
    ports: state.ports.map((p) => ({ name: p.name, port: p.port, targetPort: p.targetPort, protocol: p.protocol === 'udp' ? 'UDP' : 'TCP' })),
  });
  (object.spec as Record<string, unknown>).clusterIP = state.address;
  return object;
}

/** Puts the opted-in Namespace and the Service; the pods come after (with `app: <service name>`). */
export async function publishWorkload(api: ApiHandle, namespace: string, state: ServiceState): Promise<void> {
  await api.call({ op: 'namespace', name: namespace, labels: { [NAMESPACE_INJECT_LABEL]: 'enabled' } });
  await api.call({ op: 'service', service: kubeService(namespace, state) });
}
