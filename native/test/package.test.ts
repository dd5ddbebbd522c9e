/**
 * netlink-native as a package: importable by name from the project root with plain Node (its
 * compiled dist/, no TypeScript loader), every `exports` entry resolving to JavaScript with a
 * .d.ts beside it, and the production class carrying no test or bench operation.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { it } from 'node:test';
import { NativeNetlink } from 'netlink-native';

const ROOT = new URL('../..', import.meta.url).pathname;
/** Plain node: without test/run.mjs's conndrain-source condition, as production runs it. */
const PLAIN = { ...process.env, NODE_OPTIONS: (process.env.NODE_OPTIONS ?? '').replace(/--conditions=conndrain-source/g, '').trim() };

it('imports by name from the project root with plain node (dist/), every entry with its types', () => {
  const script = `
    const entries = ['netlink-native', 'netlink-native/types', 'netlink-native/memory', 'netlink-native/testing', 'netlink-native/ipvs-keys'];
    Promise.all(entries.map((e) => import(e))).then(([main, types, memory, testing, keys]) => console.log(JSON.stringify({
      openNetlink: typeof main.openNetlink, NetlinkError: typeof types.NetlinkError, MemoryConntrack: typeof memory.MemoryConntrack,
      insertConntrackForTest: typeof testing.insertConntrackForTest, formatServiceKey: typeof keys.formatServiceKey,
      resolved: entries.map((e) => import.meta.resolve(e)),
    })));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8', env: PLAIN });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout) as Record<string, unknown> & { resolved: string[] };
  assert.deepEqual([out.openNetlink, out.NetlinkError, out.MemoryConntrack, out.insertConntrackForTest, out.formatServiceKey], ['function', 'function', 'function', 'function', 'function']);
  for (const url of out.resolved) {
    const path = new URL(url).pathname;
    assert.match(path, /\/native\/dist\/[a-z-]+\.js$/, path);
    assert.ok(existsSync(path.replace(/\.js$/, '.d.ts')), `${path}: .d.ts beside it`);
  }
});

it('the production class carries no test or bench operation', () => {
  for (const name of ['insertConntrackForTest', 'dumpPassOnly', 'receivePassOnly', 'listConntrackRaw', 'lastDelete', 'lastDeleteEntries']) {
    assert.ok(!(name in NativeNetlink.prototype), name);
  }
});

it('NETLINK_NATIVE_ADDON overrides where the loader looks (and a wrong path says so)', () => {
  const script = `import('netlink-native').then((m) => { try { m.openNetlink(); console.log('opened'); } catch (e) { console.log(e.code + ' ' + e.message); } });`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8', env: { ...PLAIN, NETLINK_NATIVE_ADDON: '/nonexistent/netlink_native.node' } });
  assert.match(r.stdout, /^ENOENT load: the native addon is not built \(not found: \/nonexistent\/netlink_native\.node\)/);
});
