/**
 * bench/scale's Services (`--services N`): Service s (`svc-<s>`, namespace podNamespace(s),
 * clusterIP serviceAddress(s)) selects `app: svc-<s>`, the label of the pods at places
 * p with p % N = s; N is a multiple of the namespaces' count, so a Service and its pods share
 * a namespace. The API stand-in's EndpointSlice controller keeps their slices; every
 * namespace is opted in to conndrain, as the agent's Namespace watch looks for.
 */
import { NAMESPACE_INJECT_LABEL } from '../../src/contract.js';
import { service } from '../../test/apiserver/cluster-objects.js';
import type { FakeApiServer } from '../../test/apiserver/server.js';
import { NAMESPACES, podNamespace, serviceAddress } from './cluster.js';

export function serviceName(s: number): string {
  return `svc-${s}`;
}

/** The `app` label of the pod at `place` (undefined without Services). */
export function appOf(place: number, services: number): string | undefined {
  return services > 0 ? serviceName(place % services) : undefined;
}

export function checkServiceCount(services: number): void {
  if (services % NAMESPACES !== 0) throw new Error(`bench/scale: --services must be a multiple of ${NAMESPACES} (a Service and its pods share a namespace)`);
}

/** The opted-in Namespaces and `count` Services (after the pods: each Service's slices are written once). */
export function putServices(api: FakeApiServer, count: number): void {
  for (let n = 0; n < NAMESPACES; n++) api.putNamespace(podNamespace(n), { [NAMESPACE_INJECT_LABEL]: 'enabled' });
  for (let s = 0; s < count; s++) {
    const object = service({ name: serviceName(s), namespace: podNamespace(s), selector: { app: serviceName(s) }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] });
    (object.spec as Record<string, unknown>).clusterIP = serviceAddress(s);
    api.putService(object);
  }
}
