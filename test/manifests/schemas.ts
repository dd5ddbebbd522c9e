/**
 * Validation of rendered objects against the real schemas:
 * - `kubernetes-models` 4.x (Kubernetes' OpenAPI) for built-in kinds,
 * - `@kubernetes-models/cert-manager` 4.x for cert-manager.io kinds,
 * - `@kubernetes-models/prometheus-operator` 4.x (the operator's CRD schemas) for monitoring.coreos.com.
 * The models are found by apiVersion/kind, constructed, and `.validate()`d.
 *
 * Those schemas, like the API server's OpenAPI, allow unknown fields, which `kubectl apply`
 * (strict field validation by default) would reject. For built-in kinds `unknownFields`
 * closes that gap with the field lists of @kubernetes/client-node's generated models.
 */
import * as certManager from '@kubernetes-models/cert-manager';
import * as prometheusOperator from '@kubernetes-models/prometheus-operator';
import * as kubernetes from 'kubernetes-models';
import * as clientNode from '@kubernetes/client-node';
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

/** The built-in Kubernetes kinds, by `apiVersion/kind`. */
export const BUILTIN_MODELS: ReadonlyMap<string, ModelClass> = collectPackages(kubernetes);
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

interface Attribute {
  baseName: string;
  type: string;
}
type Attributed = { getAttributeTypeMap(): Attribute[] };
const CLIENT_MODELS = clientNode as unknown as Record<string, Attributed | undefined>;

function attributesOf(typeName: string): Attribute[] | undefined {
  const model = CLIENT_MODELS[typeName];
  return typeof model?.getAttributeTypeMap === 'function' ? model.getAttributeTypeMap() : undefined;
}

function walkFields(value: unknown, typeName: string, path: string, problems: string[]): void {
  const array = /^Array<(.+)>$/.exec(typeName);
  if (array?.[1] !== undefined) {
    if (Array.isArray(value)) value.forEach((item, i) => walkFields(item, array[1] ?? '', `${path}[${i}]`, problems));
    return;
  }
  const attributes = attributesOf(typeName);
  if (attributes === undefined || value === null || typeof value !== 'object' || Array.isArray(value)) return;
  const known = new Map(attributes.map((a) => [a.baseName, a.type]));
  for (const [field, child] of Object.entries(value as Record<string, unknown>)) {
    const childType = known.get(field);
    if (childType === undefined) problems.push(`${path}.${field}: unknown field (${typeName} has ${[...known.keys()].join(', ')})`);
    else walkFields(child, childType, `${path}.${field}`, problems);
  }
}

/**
 * Fields a built-in object carries that its type does not declare (what strict field
 * validation rejects). Returns undefined for kinds @kubernetes/client-node has no model of.
 */
export function unknownFields(object: KubeObject): string[] | undefined {
  if (!BUILTIN_MODELS.has(`${object.apiVersion}/${object.kind}`)) return undefined;
  const version = object.apiVersion.split('/').pop() ?? '';
  const typeName = `${version.charAt(0).toUpperCase()}${version.slice(1)}${object.kind}`;
  if (attributesOf(typeName) === undefined) return undefined;
  const problems: string[] = [];
  walkFields(object, typeName, object.kind, problems);
  return problems;
}
