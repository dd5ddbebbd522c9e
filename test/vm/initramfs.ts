/**
 * Builds (and caches under `.vm-cache/`) the guest's initramfs: static busybox, stage 1 init
 * (stage1-init.sh) and the modules needed to reach the host root over virtio-9p with an
 * overlay. Everything else (IPVS, conntrack, tunnels) is modprobe'd later from the shared
 * host root by stage 2. Rebuilt whenever an input changes (content hash in the file name).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildCpio, type CpioEntry } from './cpio.js';
import type { GuestTools } from './kernel.js';

const here = new URL('.', import.meta.url).pathname;
export const repoRoot = join(here, '..', '..');
export const cacheDir = join(repoRoot, '.vm-cache');

/** What stage 1 needs to mount the shared root; dependencies are added from modules.dep. */
export const INITRAMFS_MODULES = ['virtio_pci', '9pnet_virtio', '9p', 'overlay'];
const FORMAT_VERSION = '1';

function parseModulesDep(modulesDir: string): Map<string, string[]> {
  const deps = new Map<string, string[]>();
  for (const line of readFileSync(join(modulesDir, 'modules.dep'), 'utf8').split('\n')) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const path = line.slice(0, colon);
    const rest = line.slice(colon + 1).trim();
    deps.set(path, rest === '' ? [] : rest.split(/\s+/));
  }
  return deps;
}

function moduleName(path: string): string {
  return (path.split('/').at(-1) ?? path).replace(/\.ko(\.(xz|zst|gz))?$/, '').replace(/-/g, '_');
}

/** Module files (relative to the module tree) in load order: dependencies first. */
export function resolveModules(modulesDir: string, names: readonly string[]): string[] {
  const deps = parseModulesDep(modulesDir);
  const byName = new Map<string, string>();
  for (const path of deps.keys()) byName.set(moduleName(path), path);
  const builtin = new Set(
    readFileSync(join(modulesDir, 'modules.builtin'), 'utf8').split('\n').filter(Boolean).map(moduleName),
  );
  const ordered: string[] = [];
  const seen = new Set<string>();
  const visit = (path: string): void => {
    if (seen.has(path)) return;
    seen.add(path);
    for (const dep of deps.get(path) ?? []) visit(dep);
    ordered.push(path);
  };
  for (const name of names) {
    const normalized = name.replace(/-/g, '_');
    const path = byName.get(normalized);
    if (path === undefined) {
      if (builtin.has(normalized)) continue;
      throw new Error(`module ${name} is neither in ${modulesDir}/modules.dep nor built in`);
    }
    visit(path);
  }
  for (const path of ordered) {
    if (!path.endsWith('.ko')) throw new Error(`compressed module ${path}: busybox insmod in stage 1 needs plain .ko files`);
  }
  return ordered;
}

/** Path of an initramfs matching the current inputs, building it when absent. */
export function ensureInitramfs(tools: GuestTools): string {
  const modules = resolveModules(tools.kernel.modulesDir, INITRAMFS_MODULES);
  const stage1 = readFileSync(join(here, 'stage1-init.sh'));
  const busybox = readFileSync(tools.busybox);
  const moduleData = modules.map((path) => ({ name: path.split('/').at(-1) ?? path, data: readFileSync(join(tools.kernel.modulesDir, path)) }));
  const hash = createHash('sha256').update(FORMAT_VERSION).update(tools.kernel.version).update(stage1).update(busybox);
  for (const module of moduleData) hash.update(module.name).update(module.data);
  const digest = hash.digest('hex').slice(0, 16);
  const target = join(cacheDir, `initramfs-${tools.kernel.version}-${digest}.cpio`);
  if (existsSync(target)) return target;

  const entries: CpioEntry[] = [];
  for (const dir of ['bin', 'dev', 'proc', 'sys', 'modules', 'lower', 'rw', 'newroot']) entries.push({ kind: 'dir', path: dir });
  entries.push({ kind: 'char', path: 'dev/console', major: 5, minor: 1 });
  entries.push({ kind: 'char', path: 'dev/null', major: 1, minor: 3, mode: 0o666 });
  entries.push({ kind: 'file', path: 'bin/busybox', data: busybox, mode: 0o755 });
  for (const applet of ['sh', 'mount', 'umount', 'insmod', 'mkdir', 'cat', 'sleep', 'switch_root', 'echo']) {
    entries.push({ kind: 'symlink', path: `bin/${applet}`, target: 'busybox' });
  }
  entries.push({ kind: 'file', path: 'init', data: stage1, mode: 0o755 });
  for (const module of moduleData) entries.push({ kind: 'file', path: `modules/${module.name}`, data: module.data });
  entries.push({ kind: 'file', path: 'modules.order', data: Buffer.from(moduleData.map((m) => m.name).join('\n') + '\n') });

  mkdirSync(cacheDir, { recursive: true });
  for (const old of readdirSync(cacheDir)) {
    // Another process may be building the same target right now: only other digests go.
    if (old.startsWith('initramfs-') && old.endsWith('.cpio') && join(cacheDir, old) !== target && statSync(join(cacheDir, old)).isFile()) unlinkSync(join(cacheDir, old));
  }
  const temporary = `${target}.${process.pid}.tmp`;
  writeFileSync(temporary, buildCpio(entries));
  renameSync(temporary, target);
  return target;
}
