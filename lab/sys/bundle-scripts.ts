import { build } from 'esbuild';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { useScriptBundles } from './netns-process.js';

/** The lab scripts that run as their own processes inside namespaces. */
export const LAB_SCRIPTS = ['traffic/pod-server.ts', 'traffic/client.ts', 'traffic/probe-client.ts', 'traffic/stream-client.ts', 'control/api-host.ts'];

/**
 * Bundles each lab script into one plain-JS ESM file in `dir` (`<name>.mjs`), so a guest can
 * start it with plain node (see useScriptBundles). Packages are bundled in (the API stand-in
 * uses fast-json-patch): a bundle runs from a temporary directory with no node_modules above it.
 */
export async function bundleLabScripts(dir: string): Promise<string[]> {
  const root = fileURLToPath(new URL('../', import.meta.url));
  const outputs: string[] = [];
  for (const script of LAB_SCRIPTS) {
    const name = script.split('/').pop()!.replace(/\.ts$/, '.mjs');
    const outfile = join(dir, name);
    await build({ entryPoints: [join(root, script)], bundle: true, platform: 'node', format: 'esm', target: 'node20', outfile, logLevel: 'error' });
    outputs.push(outfile);
  }
  return outputs;
}

let hostBundles: Promise<string> | undefined;

/**
 * On the host: bundles the lab scripts once per process into a temporary directory (removed at
 * exit) and starts them from there, so each pod, client and API process starts with plain node
 * instead of compiling TypeScript through tsx (seconds per process on a loaded machine).
 */
export function useHostScriptBundles(): Promise<string> {
  hostBundles ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'conndrain-lab-scripts-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    await bundleLabScripts(dir);
    useScriptBundles(dir);
    return dir;
  })();
  return hostBundles;
}
