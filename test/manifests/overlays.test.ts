/**
 * Overlays change only what they say: every kustomization's workload containers keep the base's
 * command, args, env and resources, except for the changes its components document (the
 * comment of each components/<name>/kustomization.yaml), listed here per component. A change
 * no component documents fails, and so does a listed change that no longer happens (the list
 * must stay true). An overlay that replaced the webhook's whole `env` and lost NODE_OPTIONS
 * is the bug this exists for.
 */
import assert from 'node:assert/strict';
import { join, normalize } from 'node:path';
import { describe, it } from 'node:test';
import { findKustomizations, KUBECTL_MISSING, nameOf, render, type KubeObject } from './render.js';

/** The documented container changes of each component, as containerChanges() words them. */
const DOCUMENTED: Readonly<Record<string, readonly string[]>> = {
  'manifests/components/hook-agent': ['Deployment conndrain-webhook/webhook args +--default-hook=agent', 'Deployment conndrain-webhook/webhook args +--agent-port=9901'],
  'manifests/components/hook-exec': ['Deployment conndrain-webhook/webhook args +--default-hook=exec'],
  'manifests/components/ipvs-hold-off': ['DaemonSet conndrain-agent/agent args +--ipvs-hold=false'],
  'manifests/components/janitor': ['DaemonSet conndrain-agent/agent args +--janitor'],
  'manifests/components/self-signed': ['Deployment conndrain-webhook/webhook args +--tls-mode=self-signed', 'Deployment conndrain-webhook/webhook env +POD_NAMESPACE'],
};

const WORKLOAD_KINDS = new Set(['Deployment', 'DaemonSet', 'StatefulSet', 'Job']);

interface Container {
  name: string;
  command?: string[];
  args?: string[];
  env?: Array<{ name: string }>;
  resources?: unknown;
}

function containersOf(workload: KubeObject): Container[] {
  const spec = (workload.spec as { template?: { spec?: { initContainers?: Container[]; containers?: Container[] } } } | undefined)?.template?.spec;
  return [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])];
}

/** `+x` for each element only `after` has, `-x` for each only `before` has (as multisets, order aside). */
function listChanges(before: readonly string[], after: readonly string[]): string[] {
  const left = [...before];
  const added: string[] = [];
  for (const item of after) {
    const at = left.indexOf(item);
    if (at >= 0) left.splice(at, 1);
    else added.push(`+${item}`);
  }
  return [...added, ...left.map((item) => `-${item}`)];
}

function envChanges(before: Container['env'], after: Container['env']): string[] {
  const byName = (env: Container['env']): Map<string, string> => new Map((env ?? []).map((e) => [e.name, JSON.stringify(e)]));
  const [b, a] = [byName(before), byName(after)];
  return [
    ...[...a.keys()].filter((n) => !b.has(n)).map((n) => `+${n}`),
    ...[...b.keys()].filter((n) => !a.has(n)).map((n) => `-${n}`),
    ...[...a.keys()].filter((n) => b.has(n) && b.get(n) !== a.get(n)).map((n) => `~${n}`),
  ];
}

/** Every difference in command, args, env and resources between the base's workloads and these. */
function containerChanges(base: KubeObject[], rendered: KubeObject[]): string[] {
  const workloads = (objects: KubeObject[]): Map<string, KubeObject> => new Map(objects.filter((o) => WORKLOAD_KINDS.has(o.kind)).map((o) => [nameOf(o), o]));
  const [before, after] = [workloads(base), workloads(rendered)];
  const out: string[] = [];
  for (const [key, workload] of after) {
    const original = before.get(key);
    if (original === undefined) {
      out.push(`${key} added`);
      continue;
    }
    const originals = new Map(containersOf(original).map((c) => [c.name, c]));
    for (const container of containersOf(workload)) {
      const at = `${workload.kind} ${workload.metadata.name}/${container.name}`;
      const was = originals.get(container.name);
      if (was === undefined) {
        out.push(`${at} added`);
        continue;
      }
      originals.delete(container.name);
      if (JSON.stringify(was.command) !== JSON.stringify(container.command)) out.push(`${at} command ${JSON.stringify(was.command)} -> ${JSON.stringify(container.command)}`);
      out.push(...listChanges(was.args ?? [], container.args ?? []).map((c) => `${at} args ${c}`));
      out.push(...envChanges(was.env, container.env).map((c) => `${at} env ${c}`));
      if (JSON.stringify(was.resources) !== JSON.stringify(container.resources)) out.push(`${at} resources ${JSON.stringify(was.resources)} -> ${JSON.stringify(container.resources)}`);
    }
    for (const name of originals.keys()) out.push(`${workload.kind} ${workload.metadata.name}/${name} removed`);
  }
  for (const key of before.keys()) if (!after.has(key)) out.push(`${key} removed`);
  return out.sort();
}

/** The components a kustomization pulls in, as repository paths. */
function componentsOf(path: string, spec: Record<string, unknown>): string[] {
  return ((spec.components ?? []) as string[]).map((c) => normalize(join(path, c)));
}

describe('overlays change only what they document', { skip: KUBECTL_MISSING }, () => {
  const base = render('manifests/base');
  const kustomizations = findKustomizations().filter((k) => k.kind === 'Kustomization' && k.path !== 'manifests/base');

  for (const { path, spec } of kustomizations) {
    it(`${path}: command, args, env and resources are the base's but for its components' documented changes`, () => {
      const documented = componentsOf(path, spec).flatMap((c) => DOCUMENTED[c] ?? []).sort();
      assert.deepEqual(containerChanges(base, render(path)), documented);
    });
  }

  it('every component in the list exists (no stale entry)', () => {
    const components = new Set(findKustomizations().filter((k) => k.kind === 'Component').map((k) => k.path));
    assert.deepEqual(Object.keys(DOCUMENTED).filter((c) => !components.has(c)), []);
  });

  it('the comparison sees a replaced env, a changed command, resources and a removed argument', () => {
    const changed = structuredClone(base);
    const webhook = changed.find((o) => o.kind === 'Deployment');
    const container = webhook === undefined ? undefined : containersOf(webhook)[0];
    assert.ok(webhook !== undefined && container !== undefined);
    container.env = [{ name: 'POD_NAMESPACE' }];
    container.command = ['node'];
    container.args = (container.args ?? []).slice(1);
    container.resources = {};
    const at = `Deployment ${webhook.metadata.name}/${container.name}`;
    assert.deepEqual(containerChanges(base, changed), [
      `${at} args -webhook`,
      `${at} command undefined -> ["node"]`,
      `${at} env +POD_NAMESPACE`,
      `${at} env -NODE_OPTIONS`,
      `${at} resources ${JSON.stringify(containersOf(base.find((o) => o.kind === 'Deployment') as KubeObject)[0]?.resources)} -> {}`,
    ]);
  });
});
