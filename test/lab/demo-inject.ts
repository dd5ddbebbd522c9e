import { parseAllDocuments } from 'yaml';
import { run } from './sys/exec.js';
import { REPO_ROOT } from './sys/netns-process.js';
import { isInjectCommandAvailable } from './scenarios/webhook-available.js';

export const DEMO_MANIFEST = 'examples/deployment.yaml';

interface PodSpecLike {
  terminationGracePeriodSeconds?: number;
  containers?: { name?: string; lifecycle?: { preStop?: unknown } }[];
}

function podSpecOf(document: Record<string, unknown>): PodSpecLike | undefined {
  if (document.kind === 'Pod') return document.spec as PodSpecLike | undefined;
  const template = (document.spec as { template?: { spec?: PodSpecLike } } | undefined)?.template;
  return template?.spec;
}

/** What the injection did, per workload: one readable line per container plus the grace period. */
export function summarizeInjection(yamlText: string): string[] {
  const lines: string[] = [];
  for (const document of parseAllDocuments(yamlText)) {
    const object = document.toJS() as Record<string, unknown> | null;
    if (object === null || typeof object !== 'object') continue;
    const spec = podSpecOf(object);
    if (spec === undefined) continue;
    const name = `${String(object.kind)}/${String((object.metadata as { name?: string } | undefined)?.name)}`;
    lines.push(`${name}: terminationGracePeriodSeconds ${spec.terminationGracePeriodSeconds ?? 'unset (30)'}`);
    for (const container of spec.containers ?? []) {
      lines.push(`  container ${container.name}: preStop ${container.lifecycle?.preStop === undefined ? 'none' : JSON.stringify(container.lifecycle.preStop)}`);
    }
  }
  return lines;
}

/** Runs `conndrain inject -f examples/deployment.yaml` (the webhook's own mutation, offline) and summarizes it. */
export async function demoInjection(): Promise<string[]> {
  if (!isInjectCommandAvailable()) {
    // TODO(webhook): `conndrain inject` has not landed in this checkout yet; the demo prints the summary once it does.
    return ['(the webhook\'s `conndrain inject` command is not in this checkout yet: injection demo skipped)'];
  }
  const output = await run(process.execPath, ['--import', 'tsx', `${REPO_ROOT}cli/main.ts`, 'inject', '-f', `${REPO_ROOT}${DEMO_MANIFEST}`]);
  const summary = summarizeInjection(output);
  return summary.length > 0 ? summary : output.trim().split('\n');
}
