/**
 * Renders the kustomizations under manifests/ with the real `kubectl kustomize` (kubectl 1.32
 * embeds kustomize v5) and parses the output. Tests skip with a clear reason when kubectl is
 * absent; scripts/install-deps.sh documents it as expected on the machine.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';

export const REPO_ROOT = new URL('../../', import.meta.url).pathname;
export const MANIFESTS_DIR = join(REPO_ROOT, 'manifests');

/** A rendered Kubernetes object; fields are read through the helpers of `objects.ts`. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

export interface KustomizationDir {
  /** Path relative to the repository root, e.g. `manifests/overlays/production`. */
  path: string;
  /** `Kustomization` (renderable) or `Component` (only through a kustomization). */
  kind: 'Kustomization' | 'Component';
  /** The parsed kustomization.yaml. */
  spec: Record<string, unknown>;
}

function kubectlProblem(): string | undefined {
  const probe = spawnSync('kubectl', ['version', '--client', '-o', 'json'], { encoding: 'utf8' });
  if (probe.error !== undefined) return `kubectl not found on PATH (${probe.error.message}); install kubectl to render the manifests`;
  if (probe.status !== 0) return `kubectl version failed: ${probe.stderr}`;
  return undefined;
}

/** Why the rendering tests cannot run here, or undefined when kubectl works. */
export const KUBECTL_MISSING: string | undefined = kubectlProblem();

function walk(dir: string, out: string[]): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (name === 'kustomization.yaml') out.push(dir);
  }
  return out;
}

/** Every directory under manifests/ holding a kustomization.yaml, sorted. */
export function findKustomizations(): KustomizationDir[] {
  return walk(MANIFESTS_DIR, [])
    .sort()
    .map((dir) => {
      const spec = parseAllDocuments(readFileSync(join(dir, 'kustomization.yaml'), 'utf8'))[0]?.toJS() as Record<string, unknown>;
      const kind = spec.kind === 'Component' ? 'Component' : 'Kustomization';
      return { path: relative(REPO_ROOT, dir), kind, spec };
    });
}

const cache = new Map<string, KubeObject[]>();

/** `kubectl kustomize <dir>` parsed into objects (cached per directory). Throws kubectl's own error. */
export function render(path: string): KubeObject[] {
  const hit = cache.get(path);
  if (hit !== undefined) return hit;
  const text = execFileSync('kubectl', ['kustomize', join(REPO_ROOT, path)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const objects = parseAllDocuments(text).map((doc) => {
    if (doc.errors.length > 0) throw new Error(`${path}: YAML error in kubectl output: ${doc.errors[0]?.message ?? ''}`);
    return doc.toJS() as KubeObject;
  }).filter((o) => o !== null);
  cache.set(path, objects);
  return objects;
}

/** Every renderable kustomization, rendered: [path, objects]. */
export function renderAll(): [string, KubeObject[]][] {
  return findKustomizations().filter((k) => k.kind === 'Kustomization').map((k) => [k.path, render(k.path)]);
}

/** The one object of a kind and name in a rendering; throws a readable error when absent. */
export function pick(objects: KubeObject[], kind: string, name: string): KubeObject {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (found === undefined) throw new Error(`no ${kind}/${name} among ${objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')}`);
  return found;
}

/** A label for an object in messages: `Deployment conndrain-system/conndrain-webhook`. */
export function nameOf(object: KubeObject): string {
  const ns = object.metadata.namespace === undefined ? '' : `${object.metadata.namespace}/`;
  return `${object.kind} ${ns}${object.metadata.name}`;
}
