import { mkdir, readdir, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { REPO_ROOT } from './netns-process.js';

/**
 * The real `conndrain` CLI (cli/main.ts) bundled by esbuild into one plain-JS file, packages
 * included, so the lab starts its agents with plain node: no tsx, no module resolution over
 * hundreds of files. In the QEMU guest (TCG, the host tree read over 9p) agents started
 * through tsx did not report ready within 180 s; this is the same code, compiled on the host.
 *
 * It lives inside the repository (`.vm-cache/`, git-ignored) because the addon loader, inlined
 * here, finds `native/build/Release/netlink_native.node` through the `netlink-native` package
 * Node resolves from the bundle (node_modules/netlink-native -> native/); the guest sees it
 * read-only over 9p. Rebuilt only when a source file or the lock file is newer. The
 * lab (lab/) is left out: the CLI imports it lazily and the agent never does.
 */
export const AGENT_BUNDLE = join(REPO_ROOT, '.vm-cache', 'lab', 'conndrain.mjs');

/** What the bundle is built from (newer files here make it stale). */
const SOURCES = ['cli', 'agent', 'kube', 'log', 'time', 'src', 'webhook', 'native/lib', 'native/build/Release', 'package-lock.json'];

/** esbuild's ESM output has no `require` for the CommonJS packages it bundles: give it node's. */
const REQUIRE_BANNER = "import { createRequire as __conndrainLabRequire } from 'node:module'; const require = __conndrainLabRequire(import.meta.url);";

async function newestMtime(path: string): Promise<number> {
  const info = await stat(path).catch(() => undefined);
  if (info === undefined) return 0;
  if (!info.isDirectory()) return info.mtimeMs;
  let newest = info.mtimeMs;
  for (const entry of await readdir(path)) newest = Math.max(newest, await newestMtime(join(path, entry)));
  return newest;
}

async function isFresh(): Promise<boolean> {
  const bundle = await stat(AGENT_BUNDLE).catch(() => undefined);
  if (bundle === undefined) return false;
  const newest = Math.max(...(await Promise.all(SOURCES.map((source) => newestMtime(join(REPO_ROOT, source))))));
  return bundle.mtimeMs > newest;
}

let built: Promise<string> | undefined;

/** Builds the bundle unless it is fresh (once per process; written under a temporary name, then renamed). */
export function buildAgentBundle(): Promise<string> {
  built ??= (async () => {
    if (await isFresh()) return AGENT_BUNDLE;
    await mkdir(join(REPO_ROOT, '.vm-cache', 'lab'), { recursive: true });
    const temporary = `${AGENT_BUNDLE}.${process.pid}.tmp`;
    const { build } = await import('esbuild');
    await build({
      entryPoints: [join(REPO_ROOT, 'cli', 'main.ts')],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      // netlink-native from its TypeScript sources (as the tests run it), not its dist/
      conditions: ['conndrain-source'],
      outfile: temporary,
      banner: { js: REQUIRE_BANNER },
      external: ['esbuild'],
      logLevel: 'error',
      plugins: [{ name: 'lab-stays-out', setup: (context) => context.onResolve({ filter: /^\.\.\/lab\// }, (args) => ({ path: args.path, external: true })) }],
    });
    await rename(temporary, AGENT_BUNDLE);
    return AGENT_BUNDLE;
  })();
  built.catch(() => (built = undefined));
  return built;
}

let inGuest: string | undefined;

/** Inside the QEMU guest: the bundle the host built before boot (guest-main.ts passes its path). */
export function useAgentBundle(path: string | undefined): void {
  inGuest = path;
}

/** The bundle to start agents from: the one the host built for the guest, or a (cached) build here. */
export function labAgentBundle(): Promise<string> {
  return inGuest !== undefined ? Promise.resolve(inGuest) : buildAgentBundle();
}
