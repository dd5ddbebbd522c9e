/**
 * Validation of rendered objects against the real schemas:
 * - `kubernetes-models` 4.x (Kubernetes' OpenAPI) for built-in kinds,
 * - `@kubernetes-models/cert-manager` 4.x for cert-manager.io kinds,
 * - `@kubernetes-models/prometheus-operator` 4.x (the operator's CRD schemas) for monitoring.coreos.com.
 * The models are found by apiVersion/kind, constructed, and `.validate()`d.
 *
 * Those schemas, like the API server's OpenAPI, allow unknown fields, which `kubectl apply`
 * (strict field validation by default) would reject: `unknownFields` closes that gap.
 */
import * as certManager from '@kubernetes-models/cert-manager';
import * as prometheusOperator from '@kubernetes-models/prometheus-operator';
import * as kubernetes from 'kubernetes-models';
import type { KubeObject } from './render.js';

interface ModelClass {
  apiVersion: string;
  kind: string;
  new (data: unknown): { validate(): void };
}

function isModelClass(value: unknown): value is ModelClass {
  if (typeof value !== 'function') return false;
  const candidate = value as unknown as Record<string, unknown>;
  return typeof candidate.apiVersion === 'string' && typeof candidate.kind === 'string' && typeof candidate.prototype === 'object';
}

function collect(namespace: unknown, into: Map<string, ModelClass>, seen: Set<unknown>): void {
  if (namespace === null || typeof namespace !== 'object' || seen.has(namespace)) return;
  seen.add(namespace);
  for (const value of Object.values(namespace as Record<string, unknown>)) {
    if (isModelClass(value)) into.set(`${value.apiVersion}/${value.kind}`, value);
    else collect(value, into, seen);
  }
}

function collectPackages(...packages: unknown[]): Map<string, ModelClass> {
  const models = new Map<string, ModelClass>();
  const seen = new Set<unknown>();
  for (const pkg of packages) collect(pkg, models, seen);
  return models;
}

/** Every model class of the three packages, by `apiVersion/kind`. */
export const MODELS: ReadonlyMap<string, ModelClass> = collectPackages(kubernetes, certManager, prometheusOperator);

/** The schema problems of one object (empty when valid, or one line saying no schema is known). */
export function validateAgainstSchema(object: KubeObject): string[] {
  const model = MODELS.get(`${object.apiVersion}/${object.kind}`);
  if (model === undefined) return [`no schema known for ${object.apiVersion} ${object.kind}`];
  try {
    new model(object).validate();
    return [];
  } catch (error) {
    return [error instanceof Error ? error.message : String(error)];
  }
}

/**
 * Fields of an object its schema does not declare, found by watching the schema's own
 * validator: it reads every property its schema declares (and enumerates the keys of maps),
 * so a key it never touched is one strict field validation (`kubectl apply` default) would
 * reject. Works alike for built-in kinds and the cert-manager / Prometheus Operator CRDs.
 */
export function unknownFields(object: KubeObject): string[] {
  const model = MODELS.get(`${object.apiVersion}/${object.kind}`);
  if (model === undefined) return [];
  const instance = new model(object) as unknown as Record<string, unknown> & { validate(): void };
  const reads = new Map<string, Set<string>>();
  const enumerated = new Set<string>();
  const mark = (path: string, key: string): void => {
    const set = reads.get(path) ?? new Set<string>();
    set.add(key);
    reads.set(path, set);
  };
  const watch = (value: unknown, path: string): unknown => {
    if (value === null || typeof value !== 'object') return value;
    return new Proxy(value, {
      get(target, key, receiver): unknown {
        const child = Reflect.get(target, key, receiver) as unknown;
        if (typeof key !== 'string') return child;
        mark(path, key);
        return watch(child, `${path}.${key}`);
      },
      has(target, key): boolean {
        if (typeof key === 'string') mark(path, key);
        return Reflect.has(target, key);
      },
      ownKeys(target): (string | symbol)[] {
        enumerated.add(path);
        return Reflect.ownKeys(target);
      },
    });
  };
  try {
    instance.validate.call(watch(instance, object.kind));
  } catch {
    // Schema errors are validateAgainstSchema's to report; the reads made so far still count.
  }
  const problems: string[] = [];
  const walk = (value: unknown, path: string): void => {
    if (value === null || typeof value !== 'object') return;
    const isArray = Array.isArray(value);
    for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
      const childPath = `${path}.${key}`;
      if (!isArray && !enumerated.has(path) && !(reads.get(path)?.has(key) ?? false)) problems.push(`${childPath.replace(/\.(\d+)(?=\.|$)/g, '[$1]')}: unknown field`);
      else walk(child, childPath);
    }
  };
  walk(instance, object.kind);
  return problems;
}
