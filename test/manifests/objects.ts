/** Typed views of rendered objects (kubernetes-models' interfaces) for the policy tests. */
import type { IDaemonSet } from 'kubernetes-models/apps/v1/DaemonSet';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IMutatingWebhookConfiguration } from 'kubernetes-models/admissionregistration.k8s.io/v1/MutatingWebhookConfiguration';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import type { IService } from 'kubernetes-models/v1/Service';
import { pick, type KubeObject } from './render.js';

export const WEBHOOK_DEPLOYMENT = 'conndrain-webhook';
export const WEBHOOK_SERVICE = 'conndrain-webhook';
export const WEBHOOK_CERTIFICATE = 'conndrain-webhook-tls';
export const AGENT_DAEMONSET = 'conndrain-agent';
export const WEBHOOK_CONFIGURATION = 'conndrain';

export function deployment(objects: KubeObject[], name: string): IDeployment {
  return pick(objects, 'Deployment', name) as unknown as IDeployment;
}

export function daemonSet(objects: KubeObject[], name: string): IDaemonSet {
  return pick(objects, 'DaemonSet', name) as unknown as IDaemonSet;
}

export function service(objects: KubeObject[], name: string): IService {
  return pick(objects, 'Service', name) as unknown as IService;
}

export function webhookConfiguration(objects: KubeObject[], name: string): IMutatingWebhookConfiguration {
  return pick(objects, 'MutatingWebhookConfiguration', name) as unknown as IMutatingWebhookConfiguration;
}

/** The pod spec of a Deployment or DaemonSet; throws when it has none. */
export function podSpecOf(workload: IDeployment | IDaemonSet): IPodSpec {
  const spec = workload.spec?.template.spec;
  if (spec === undefined) throw new Error(`${workload.kind} ${workload.metadata?.name ?? ''} has no pod template spec`);
  return spec;
}

/** The one container of a single-container workload; throws otherwise. */
export function onlyContainer(workload: IDeployment | IDaemonSet): IContainer {
  const containers = podSpecOf(workload).containers;
  if (containers.length !== 1 || containers[0] === undefined) throw new Error(`${workload.metadata?.name ?? ''}: expected one container, found ${containers.length}`);
  return containers[0];
}

/** The number behind a container port given by number or by name. */
export function resolvePort(container: IContainer, port: number | string | undefined): number | undefined {
  if (typeof port === 'number') return port;
  return container.ports?.find((p) => p.name === port)?.containerPort;
}
