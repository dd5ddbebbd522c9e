import { run } from './exec.js';

/** One setup command as argv, or a raw shell line (for `a || b`). */
export type ScriptStep = readonly string[] | { shell: string };

export function quote(arg: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

export function renderScript(steps: readonly ScriptStep[]): string {
  return ['set -e', ...steps.map((step) => ('shell' in step ? step.shell : step.map(quote).join(' ')))].join('\n') + '\n';
}

/**
 * Runs many setup commands (`ip`, `sysctl`) as one `sh -e` script: one process start instead
 * of one per command, which matters in the TCG guest, where every spawn from node is slow (docs/benchmarks.md, lab).
 * Stops at the first failing command; the error carries its stderr.
 */
export async function runSteps(steps: readonly ScriptStep[]): Promise<void> {
  if (steps.length === 0) return;
  await run('sh', ['-s'], renderScript(steps));
}
