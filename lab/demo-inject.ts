import { readFile } from 'node:fs/promises';
import { parseAllDocuments } from 'yaml';
import { run } from './sys/exec.js';
import { REPO_ROOT } from './sys/netns-process.js';

export const DEMO_MANIFEST = 'examples/deployment.yaml';

interface PreStopLike {
  httpGet?: { host?: string; port?: number | string; path?: string; scheme?: string };
  sleep?: { seconds?: number };
  exec?: { command?: string[] };
}

interface PodSpecLike {
  terminationGracePeriodSeconds?: number;
  containers?: { name?: string; lifecycle?: { preStop?: PreStopLike } }[];
}

function describePreStop(hook: PreStopLike | undefined): string {
  if (hook === undefined) return 'no preStop hook';
  if (hook.httpGet !== undefined) return `preStop httpGet ${(hook.httpGet.scheme ?? 'HTTP').toLowerCase()}://${hook.httpGet.host ?? '<pod>'}:${hook.httpGet.port ?? '?'}${hook.httpGet.path ?? '/'}`;
  if (hook.sleep !== undefined) return `preStop sleep ${hook.sleep.seconds ?? '?'} s`;
  if (hook.exec !== undefined) return `preStop exec ${JSON.stringify(hook.exec.command ?? [])}`;
  return `preStop ${JSON.stringify(hook)}`;
}

function podSpecOf(document: Record<string, unknown>): PodSpecLike | undefined {
  if (document.kind === 'Pod') return document.spec as PodSpecLike | undefined;
  const template = (document.spec as { template?: { spec?: PodSpecLike } } | undefined)?.template;
  return template?.spec;
}

function gracePeriods(yamlText: string): Map<string, number | undefined> {
  const graces = new Map<string, number | undefined>();
  for (const document of parseAllDocuments(yamlText)) {
    const object = document.toJS() as Record<string, unknown> | null;
    if (object === null || typeof object !== 'object') continue;
    const spec = podSpecOf(object);
    if (spec !== undefined) graces.set(workloadName(object), spec.terminationGracePeriodSeconds);
  }
  return graces;
}

function workloadName(object: Record<string, unknown>): string {
  return `${String(object.kind)}/${String((object.metadata as { name?: string } | undefined)?.name)}`;
}

/** What the injection did, per workload: the grace period before -> after, and each container's hook. */
export function summarizeInjection(yamlText: string, originalYaml = ''): string[] {
  const before = gracePeriods(originalYaml);
  const lines: string[] = [];
  for (const document of parseAllDocuments(yamlText)) {
    const object = document.toJS() as Record<string, unknown> | null;
    if (object === null || typeof object !== 'object') continue;
    const spec = podSpecOf(object);
    if (spec === undefined) continue;
    const name = workloadName(object);
    const was = before.has(name) ? `${before.get(name) ?? 'unset (30)'} -> ` : '';
    lines.push(`${name}: terminationGracePeriodSeconds ${was}${spec.terminationGracePeriodSeconds ?? 'unset (30)'}`);
    for (const container of spec.containers ?? []) {
      lines.push(`  container ${container.name ?? '?'}: ${describePreStop(container.lifecycle?.preStop)}`);
    }
  }
  return lines;
}

/** Runs `conndrain inject -f examples/deployment.yaml` (the webhook's own mutation, offline) and summarizes it. */
export async function demoInjection(): Promise<string[]> {
  const manifest = `${REPO_ROOT}${DEMO_MANIFEST}`;
  const output = await run(process.execPath, ['--import', 'tsx', `${REPO_ROOT}cli/main.ts`, 'inject', '-f', manifest]);
  const summary = summarizeInjection(output, await readFile(manifest, 'utf8'));
  return summary.length > 0 ? summary : output.trim().split('\n');
}
