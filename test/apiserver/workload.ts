/**
 * A workload's cluster objects beside its pods, for tests that want what the lab's scenarios
 * have: the Namespace opted in to conndrain and a Service selecting the pods' `app` label
 * (managedPod's default `shop`), so the stand-in keeps EndpointSlices for them.
 */
import { NAMESPACE_INJECT_LABEL } from '../../src/contract.js';
import { service, type ServicePortSpec } from './cluster-objects.js';
import type { FakeApiServer, JsonObject } from './server.js';

export interface WorkloadOptions {
  namespace?: string;
  app?: string;
  ports?: ServicePortSpec[];
}

/** Puts the opted-in Namespace and the Service `<app>`; returns the stored Service. */
export function putWorkload(api: FakeApiServer, o: WorkloadOptions = {}): JsonObject {
  const namespace = o.namespace ?? 'shop';
  const app = o.app ?? 'shop';
  api.putNamespace(namespace, { [NAMESPACE_INJECT_LABEL]: 'enabled' });
  return api.putService(service({ name: app, namespace, selector: { app }, ports: o.ports ?? [{ name: 'http', port: 80, targetPort: 8080 }] }));
}
