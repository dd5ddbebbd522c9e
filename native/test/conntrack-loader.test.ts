/** The loader: finds the built addon from the sources, and fails clearly off Linux. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { it } from 'node:test';

const ADDON = new URL('../lib/addon.ts', import.meta.url).pathname;

function load(platform: string): string {
  const script = `Object.defineProperty(process, 'platform', { value: '${platform}' });
    import('${ADDON}').then((m) => { try { const a = m.loadAddon(); console.log('loaded ' + a.ops().join(',')); } catch (e) { console.log(e.name + ' ' + e.code + ' ' + e.message); } });`;
  return spawnSync(process.execPath, ['--import', 'tsx', '-e', script], { encoding: 'utf8' }).stdout;
}

it('refuses to load off Linux with a clear NetlinkError', () => {
  assert.match(load('darwin'), /^NetlinkError ENOTSUP load: netlink-native works only on Linux .*this is darwin/);
});

it('loads the built addon on Linux with the conntrack ops', () => {
  assert.match(load('linux'), /^loaded .*ct_stats,ct_list,ct_delete,ct_insert/);
});
