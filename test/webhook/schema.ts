/**
 * Validates objects against the real Kubernetes schemas (kubernetes-models 4.x) and the one
 * rule the schema cannot express that injection must respect: a preStop sleep never exceeds
 * terminationGracePeriodSeconds (the API server rejects that pod).
 */
import { Pod } from 'kubernetes-models/v1';
import { DaemonSet, Deployment, ReplicaSet, StatefulSet } from 'kubernetes-models/apps/v1';
import { CronJob, Job } from 'kubernetes-models/batch/v1';

type Validating = { validate(): void };
const MODELS: Record<string, (data: never) => Validating> = {
  Pod: (d) => new Pod(d),
  Deployment: (d) => new Deployment(d),
  StatefulSet: (d) => new StatefulSet(d),
  DaemonSet: (d) => new DaemonSet(d),
  ReplicaSet: (d) => new ReplicaSet(d),
  Job: (d) => new Job(d),
  CronJob: (d) => new CronJob(d),
};

export function validateKubernetesObject(kind: string, object: unknown): void {
  const model = MODELS[kind];
  if (model === undefined) throw new Error(`no schema for kind ${kind}`);
  model(structuredClone(object) as never).validate();
}

interface PodSpecLike {
  terminationGracePeriodSeconds?: number;
  containers?: Array<{ name: string; lifecycle?: { preStop?: { sleep?: { seconds: number } } } }>;
}

/** Throws when a sleep preStop is longer than the grace period (30 when unset). */
export function assertSleepWithinGrace(spec: PodSpecLike): void {
  const grace = spec.terminationGracePeriodSeconds ?? 30;
  for (const c of spec.containers ?? []) {
    const seconds = c.lifecycle?.preStop?.sleep?.seconds;
    if (seconds !== undefined && seconds > grace) throw new Error(`container ${c.name}: sleep ${seconds}s > grace ${grace}s`);
  }
}
