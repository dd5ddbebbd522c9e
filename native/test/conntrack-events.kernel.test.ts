/**
 * The conntrack event index on the real kernel, in network namespaces this file creates
 * (names `events-<pid>-...`):
 * - the shared contract suite (conntrack-events-contract.ts): events from IPCTNL_MSG_CT_NEW
 *   inserts and deletes, the kernel-side BPF filter, an induced overrun, resync, verify;
 * - real TCP and UDP flows through an nftables DNAT in a "node" namespace: opened and closed
 *   while subscribed, indexed and removed;
 * - a watched set too large for classic BPF falls back to filtering in C, and says so.
 */
import assert from 'node:assert/strict';
import { execFileSync, type ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { openNetlink } from 'netlink-native';
import { conntrackEventsContract, until, type EventsTarget } from './conntrack-events-contract.js';
import { isRoot, startInNetns, wireClientNodePod } from './conntrack-netns.js';
import { insertConntrackForTest } from 'netlink-native/testing';

const skip = !isRoot() ? 'needs root (network namespaces)' : false;
const PREFIX = `events-${process.pid}-`;
let counter = 0;
const created = new Set<string>();

function sh(cmd: string, args: string[], input?: string): string {
  return execFileSync(cmd, args, { encoding: 'utf8', input, stdio: ['pipe', 'pipe', 'pipe'] });
}

function addNetns(tag: string): string {
  const name = `${PREFIX}${tag}${counter++}`;
  sh('ip', ['netns', 'add', name]);
  created.add(name);
  sh('ip', ['-n', name, 'link', 'set', 'lo', 'up']);
  return name;
}

function deleteNetns(name: string): void {
  created.delete(name);
  try {
    sh('ip', ['netns', 'del', name]);
  } catch {
    // already gone
  }
}

function kernelTarget(): Promise<EventsTarget & { ns: string }> {
  const ns = addNetns('t');
  const api = openNetlink({ netns: ns });
  return Promise.resolve({
    api,
    ns,
    fill: (specs) => insertConntrackForTest(api, specs),
    close: () => {
      api.close();
      deleteNetns(ns);
      return Promise.resolve();
    },
  });
}

describe('conntrack event index on the kernel', { skip }, () => {
  after(() => {
    for (const ns of [...created]) deleteNetns(ns);
  });

  conntrackEventsContract('kernel via netlink-native', kernelTarget);

  it('entries created before anyone listened (no event cache, nf_conntrack_events=2) are re-checked by GET: deleted behind its back, they leave the index', async () => {
    const t = await kernelTarget();
    try {
      // TCP entries created while no listener exists in this namespace: the kernel gives them no
      // event cache, so their deletion will never be announced
      await t.fill([{ protocol: 'tcp', origSrc: '10.1.0.1', srcCount: 10, origDst: '10.96.0.10', dstPort: 80, replySrc: '10.244.1.10', count: 20, state: 'ESTABLISHED' }]);
      const index = await t.api.openConntrackEvents();
      try {
        await index.setWatchedAddresses(['10.244.1.10']);
        assert.equal((await index.flowsOf(['10.244.1.10'])).flows.length, 20);
        const other = openNetlink({ netns: t.ns });
        await other.deleteConntrack({ addresses: ['10.244.1.10'], match: ['replySrc'], protocols: ['tcp'] });
        other.close();
        const after = await index.flowsOf(['10.244.1.10']);
        assert.equal(after.flows.length, 0, 'the GET found them gone (ENOENT)');
        assert.equal(after.fresh, true);
        assert.equal(index.stats().flows, 0);
      } finally {
        index.close();
      }
    } finally {
      await t.close();
    }
  });

  it('filters a large set in the kernel exactly (jump chunks of the generated program): watched addresses far in the set pass, neighbours do not', async () => {
    const t = await kernelTarget();
    const index = await t.api.openConntrackEvents();
    try {
      const v4 = Array.from({ length: 1500 }, (_, i) => `10.240.${Math.floor(i / 250)}.${(i % 250) + 1}`);
      const v6 = Array.from({ length: 60 }, (_, i) => `fd00:98::${(i + 1).toString(16)}`);
      await index.setWatchedAddresses([...v4, ...v6]);
      const s = index.stats();
      assert.equal(s.filter, 'bpf');
      assert.ok(s.filterInstructions > 3000 && s.filterInstructions <= 4096, `${s.filterInstructions} instructions`);
      const watched = [v4[0], v4[199], v4[200], v4[1499], v6[0], v6[23], v6[24], v6[59]];
      const unwatched = ['10.240.6.1', '10.240.0.251', 'fd00:98::3d', 'fd00:98::1:1', '10.241.0.1'];
      const spec = (addr: string, i: number, asReplySrc: boolean) => {
        const v6addr = addr.includes(':');
        return asReplySrc
          ? { protocol: 'udp' as const, origSrc: v6addr ? 'fd00:1::1' : '10.1.0.1', srcPort: 2000 + i, origDst: v6addr ? 'fd00:96::10' : '10.96.0.10', dstPort: 53, replySrc: addr, count: 1 }
          : { protocol: 'tcp' as const, origSrc: v6addr ? 'fd00:1::1' : '10.1.0.1', srcPort: 3000 + i, origDst: addr, dstPort: 80, count: 1 };
      };
      await t.fill([...watched, ...unwatched].flatMap((a, i) => [spec(a ?? '', i, true), spec(a ?? '', i, false)]));
      await until(() => index.stats().flows === 2 * watched.length, `${2 * watched.length} watched flows`);
      await new Promise((r) => setTimeout(r, 100));
      const after = index.stats();
      assert.equal(after.flows, 2 * watched.length);
      assert.equal(after.eventsFilteredOut, 0, 'no unwatched event got through the kernel filter');
      assert.equal(after.events, 2 * watched.length);
    } finally {
      index.close();
      await t.close();
    }
  });

  it('resynchronises by itself after an overrun (autoResync) and then matches a dump', async () => {
    const t = await kernelTarget();
    const index = await t.api.openConntrackEvents({ recvBufferBytes: 4096 });
    try {
      await index.setWatchedAddresses(['10.244.1.10']);
      await t.fill([{ protocol: 'udp', origSrc: '10.1.0.1', srcCount: 100, origDst: '10.96.0.10', dstPort: 53, replySrc: '10.244.1.10', count: 3000 }]);
      await until(() => index.stats().overruns > 0, 'an overrun');
      await until(() => !index.stats().stale && index.stats().resyncs > 0, 'the automatic resync');
      const got = await index.flowsOf(['10.244.1.10']);
      assert.equal(got.fresh, true);
      assert.equal(got.flows.length, 3000);
    } finally {
      index.close();
      await t.close();
    }
  });

  it('falls back to filtering in C when the watched set does not fit classic BPF (4096 instructions), and says so', async () => {
    const t = await kernelTarget();
    const index = await t.api.openConntrackEvents();
    try {
      const many = Array.from({ length: 600 }, (_, i) => `fd00:99::${(i + 1).toString(16)}`);
      await index.setWatchedAddresses([...many, '10.244.1.10']);
      let s = index.stats();
      assert.equal(s.filter, 'userspace', 'IPv6 accepted whole');
      assert.ok(s.filterInstructions > 0 && s.filterInstructions <= 4096, `${s.filterInstructions} instructions`);
      await t.fill([
        { protocol: 'udp', origSrc: 'fd00:1::1', srcCount: 10, origDst: 'fd00:96::10', dstPort: 53, replySrc: 'fd00:77::1', count: 50 },
        { protocol: 'udp', origSrc: '10.1.0.1', srcCount: 10, origDst: '10.96.0.10', dstPort: 53, replySrc: '10.128.0.1', count: 50 },
        { protocol: 'udp', origSrc: 'fd00:1::1', srcCount: 10, srcPort: 5000, origDst: 'fd00:96::10', dstPort: 53, replySrc: many[7] ?? '', count: 3 },
      ]);
      await until(() => index.stats().flows === 3, 'the three watched IPv6 flows');
      await until(() => index.stats().eventsFilteredOut >= 50, 'the unrelated IPv6 events checked in C');
      s = index.stats();
      assert.ok(s.events - s.eventsFilteredOut === 3, `IPv4 still filtered in the kernel: ${JSON.stringify(s)}`);
      await index.setWatchedAddresses(['10.244.1.10']);
      assert.equal(index.stats().filter, 'bpf');
    } finally {
      index.close();
      await t.close();
    }
  });
});

/** client --(veth)--> node (nftables DNAT of a service address) --(veth)--> pod, both families. */
describe('conntrack event index on the kernel: real flows through a DNATed service', { skip }, () => {
  const POD4 = '10.202.2.2';
  const POD6 = 'fd02:2::2';
  const VIP4 = '10.96.8.10';
  const VIP6 = 'fd02:96::10';
  let client = '';
  let node = '';
  let pod = '';
  const children: ChildProcess[] = [];

  before(async () => {
    client = addNetns('c');
    node = addNetns('n');
    pod = addNetns('p');
    wireClientNodePod({ client, node, pod }, '10.202', 'fd02');
    sh('ip', ['netns', 'exec', node, 'nft', '-f', '-'], `
      table inet events {
        chain pre { type nat hook prerouting priority dstnat;
          ip daddr ${VIP4} tcp dport 80 dnat ip to ${POD4}:8080
          ip daddr ${VIP4} udp dport 53 dnat ip to ${POD4}:8053
          ip6 daddr ${VIP6} tcp dport 80 dnat ip6 to [${POD6}]:8080
        }
      }`);
    children.push(await startInNetns(pod, `
      const net = require('net'), dgram = require('dgram');
      net.createServer((s) => s.on('data', (d) => s.write(d))).listen(8080, '::', () => {
        const u = dgram.createSocket('udp4'); u.on('message', (m, r) => u.send(m, r.port, r.address)); u.bind(8053);
        setTimeout(() => console.log('READY'), 200);
      });`));
  });

  after(() => {
    for (const child of children) child.kill('SIGKILL');
    for (const ns of [...created]) deleteNetns(ns);
  });

  it('indexes real connections opened while subscribed (state follows the handshake), and removes them when deleted', async () => {
    const api = openNetlink({ netns: node });
    const index = await api.openConntrackEvents();
    let clientProc: ChildProcess | undefined;
    try {
      await index.setWatchedAddresses([POD4, POD6]);
      assert.equal(index.stats().flows, 0);
      clientProc = await startInNetns(client, `
        const net = require('net'), dgram = require('dgram');
        const keep = [];
        const tcp = (host, port) => new Promise((ok, fail) => { const s = net.connect(port, host, () => { s.write('x'); s.once('data', () => ok()); }); s.on('error', fail); keep.push(s); });
        const udp = (host) => new Promise((ok, fail) => { const u = dgram.createSocket('udp4'); keep.push(u); u.on('message', () => ok()); u.on('error', fail); u.send('x', 53, host); });
        Promise.all([tcp('${VIP4}', 80), tcp('${VIP4}', 80), tcp('${VIP6}', 80), udp('${VIP4}'), tcp('${POD4}', 8080)])
          .then(() => console.log('READY'), (e) => { console.error(e); process.exit(1); });
        process.stdin.on('data', () => { for (const s of keep) if (s.end) s.end(); else s.close(); });
        setInterval(() => {}, 1000);`);
      await until(async () => (await index.flowsOf([POD4, POD6])).flows.filter((e) => e.state === 'ESTABLISHED' || e.protocol === 'udp').length === 5, 'five established flows in the index');
      const key = (e: { original: { src: string; srcPort?: number; dst: string; dstPort?: number }; state?: string }): string => `${e.original.src}:${e.original.srcPort}>${e.original.dst}:${e.original.dstPort} ${e.state ?? '-'}`;
      const dumpKeys = async (): Promise<string[]> => (await api.listConntrack({ addresses: [POD4, POD6], match: ['origDst', 'replySrc'] })).map(key).sort();
      await until(async () => JSON.stringify((await index.flowsOf([POD4, POD6])).flows.map(key).sort()) === JSON.stringify(await dumpKeys()), 'the index to agree with a dump (tuples and states)');
      const got = await index.flowsOf([POD4, POD6]);
      assert.equal(got.fresh, true);
      assert.equal(got.flows.length, 5);
      assert.ok(got.flows.filter((e) => e.original.dst === VIP4 || e.original.dst === VIP6).every((e) => e.statusFlags.includes('DST_NAT')));
      // the client closes its connections: TCP moves to closing states (events), still indexed until it expires
      clientProc.stdin?.write('close\n');
      await until(async () => (await index.flowsOf([POD4, POD6])).flows.filter((e) => e.protocol === 'tcp' && e.state === 'ESTABLISHED').length === 0, 'TCP flows leave ESTABLISHED');
      const r = await index.deleteFlowsOf([POD4, POD6]);
      assert.equal(r.deleted, 5);
      // A late FIN/ACK of a closing connection may create a fresh entry (loose TCP tracking) after
      // the delete: what must hold is that the index follows the kernel, whatever it holds now.
      await until(async () => JSON.stringify((await index.flowsOf([POD4, POD6])).flows.map(key).sort()) === JSON.stringify(await dumpKeys()), 'the index to agree with a dump after the delete');
    } finally {
      clientProc?.kill('SIGKILL');
      index.close();
      api.close();
    }
  });
});
