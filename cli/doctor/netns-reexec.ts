import { spawn } from 'node:child_process';

/** Set in the child so it knows which namespace it runs in (and never re-executes again). */
export const IN_NETNS_ENV = 'CONNDRAIN_IN_NETNS';

/**
 * Runs this same CLI invocation again inside a named network namespace (`ip netns exec`),
 * without the `--netns` flag. `/proc/sys/net/*` and `/proc/net/*` answer for the namespace
 * of the process that reads them, and node cannot switch its own namespace, so a child in
 * the namespace is the simplest correct way to read them. Resolves with the child's exit code.
 */
export async function rerunInNetns(netns: string): Promise<number> {
  const args = withoutFlag(process.argv.slice(1), 'netns');
  const child = spawn('ip', ['netns', 'exec', netns, process.execPath, ...process.execArgv, ...args], {
    stdio: 'inherit',
    env: { ...process.env, [IN_NETNS_ENV]: netns },
  });
  return await new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve(code ?? (signal === null ? 1 : 128)));
  });
}

/** The namespace this process was re-executed into, if any. */
export function currentNetns(): string | undefined {
  const value = process.env[IN_NETNS_ENV];
  return value === undefined || value === '' ? undefined : value;
}

function withoutFlag(args: string[], flag: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    if (arg === `--${flag}`) { i++; continue; }
    if (arg.startsWith(`--${flag}=`)) continue;
    out.push(arg);
  }
  return out;
}
