/**
 * conntrack on the real kernel, through the addon, in network namespaces this file creates:
 * - the shared contract suite (a fresh namespace per case, entries made with IPCTNL_MSG_CT_NEW,
 *   `conntrack -L` as an independent oracle);
 * - real TCP and UDP flows from a client namespace through a "node" namespace that DNATs a
 *   service address (nftables) to a "pod" namespace, IPv4 and IPv6;
 * - ACK overruns (ENOBUFS), truncated reads (MSG_TRUNC), deletes while a large dump runs,
 *   serialized concurrent calls, close, and a caller without CAP_NET_ADMIN.
 */
import assert from 'node:assert/strict';
import { execFileSync, type ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { loadAddon } from '../lib/addon.js';
import { openNetlink, NetlinkError, type NativeNetlink, type NativeOpenOptions } from 'netlink-native';
import { decodeEntryRecords } from '../lib/conntrack-records.js';
import { conntrackContract, entryKey, fixture, POD, type ConntrackTarget } from './conntrack-contract.js';
import { addNetns, conntrackCliKeys, deleteAllNetns, deleteNetns, inNetns, isRoot, startInNetns, wireClientNodePod } from './conntrack-netns.js';
import { insertConntrackForTest, lastDelete, lastDeleteEntries, listConntrackRaw } from 'netlink-native/testing';

const skip = !isRoot() ? 'needs root (network namespaces)' : false;

async function kernelTarget(options: Omit<NativeOpenOptions, 'netns'> = {}): Promise<ConntrackTarget & { api: NativeNetlink; ns: string }> {
  const ns = addNetns('t');
  const api = openNetlink({ netns: ns, ...options });
  return Promise.resolve({
    api,
    ns,
    fill: (specs) => insertConntrackForTest(api, specs),
    oracleKeys: () => Promise.resolve(conntrackCliKeys(ns)),
    close: () => {
      api.close();
      deleteNetns(ns);
      return Promise.resolve();
    },
  });
}

describe('conntrack on the kernel', { skip }, () => {
  after(() => deleteAllNetns());

  conntrackContract('kernel via netlink-native', () => kernelTarget());

  it('opens in a named namespace and fails clearly for a missing one', () => {
    assert.throws(() => openNetlink({ netns: 'cdct-does-not-exist' }), (e: unknown) => e instanceof NetlinkError && e.code === 'ENOENT' && /does not exist/.test(e.message));
    assert.throws(() => openNetlink({ netns: '../etc' }), (e: unknown) => e instanceof NetlinkError && e.code === 'EINVAL');
  });

  it('recovers every ACK lost to a receive-queue overrun (ENOBUFS): all targeted entries deleted, counted once', async () => {
    const t = await kernelTarget({ ackRcvbufBytes: 1, deleteBatch: 256 });
    try {
      const fill = await t.fill([
        { protocol: 'udp', origSrc: '10.0.0.1', srcCount: 200, origDst: '10.96.0.10', dstPort: 53, replySrc: POD.v4, count: 600 },
        { protocol: 'udp', origSrc: '10.0.1.1', srcCount: 50, origDst: '10.96.0.10', dstPort: 53, replySrc: '10.244.7.7', count: 100 },
      ]);
      assert.equal(fill.created, 700);
      const result = await t.api.deleteConntrack({ addresses: [POD.v4], match: ['replySrc'] });
      const diag = lastDelete(t.api);
      assert.ok(diag !== undefined && diag.ackOverruns > 0, `an overrun happened: ${JSON.stringify(diag)}`);
      assert.ok(diag.resent > 0);
      assert.deepEqual({ matched: result.matched, deleted: result.deleted, alreadyGone: result.alreadyGone, failed: result.failed }, { matched: 600, deleted: 600, alreadyGone: 0, failed: 0 });
      const left = await t.api.listConntrack();
      assert.equal(left.length, 100);
      assert.ok(left.every((e) => e.reply.src === '10.244.7.7'));
      assert.equal(conntrackCliKeys(t.ns).length, 100);
    } finally {
      await t.close();
    }
  });

  it('exact-tuple deletes recover ACKs lost to an overrun, count each entry once, and the C side refuses incomplete tuples itself', async () => {
    const t = await kernelTarget({ ackRcvbufBytes: 1, deleteBatch: 256 });
    try {
      const fill = await t.fill([{ protocol: 'udp', origSrc: '10.0.0.1', srcCount: 200, origDst: '10.96.0.10', dstPort: 53, replySrc: POD.v4, count: 700 }]);
      assert.equal(fill.created, 700);
      const all = await t.api.listConntrack();
      const chosen = all.slice(0, 600);
      const result = await t.api.deleteConntrackEntries(chosen);
      const diag = lastDeleteEntries(t.api);
      assert.ok(diag !== undefined && diag.ackOverruns > 0 && diag.resent > 0, `an overrun happened: ${JSON.stringify(diag)}`);
      assert.deepEqual({ deleted: result.deleted, alreadyGone: result.alreadyGone, failed: result.failed, byProtocol: result.byProtocol }, { deleted: 600, alreadyGone: 0, failed: 0, byProtocol: { udp: { deleted: 600, alreadyGone: 0, failed: 0 } } });
      const left = new Set((await t.api.listConntrack()).map((e) => e.id));
      assert.deepEqual([...left].sort(), all.slice(600).map((e) => e.id).sort());
      assert.equal(conntrackCliKeys(t.ns).length, 100);
      // Past the TypeScript checks, straight to the addon: the C parser refuses a tuple that would flush the table.
      const raw = loadAddon();
      const handle = raw.open({ netns: t.ns });
      try {
        for (const entry of [{ family: 4, protocolNumber: 17, original: { src: '10.0.0.1', dst: '10.96.0.10' } }, { family: 4, protocolNumber: 17 }, { family: 6, protocolNumber: 4, original: { src: '10.0.0.1', dst: '10.96.0.10' } }]) {
          await assert.rejects(raw.call(handle, 'ct_delete_tuples', { entries: [entry] }), (e: unknown) => (e as { errno?: number }).errno === 22, JSON.stringify(entry));
        }
      } finally {
        raw.close(handle);
      }
      assert.equal(conntrackCliKeys(t.ns).length, 100, 'nothing flushed');
    } finally {
      await t.close();
    }
  });

  it('grows a too-small receive buffer instead of truncating (MSG_TRUNC never loses entries)', async () => {
    const t = await kernelTarget({ recvBufferBytes: 256 });
    try {
      await t.fill(fixture());
      const raw = await listConntrackRaw(t.api);
      assert.ok(raw.bufferGrowths > 0);
      const entries = decodeEntryRecords(raw.records);
      assert.equal(entries.length, 50);
      assert.deepEqual(entries.map(entryKey).sort(), conntrackCliKeys(t.ns).sort());
    } finally {
      await t.close();
    }
  });

  it('reports a truncated read (MSG_TRUNC) as EMSGSIZE rather than a short listing, and the handle keeps working', async () => {
    const t = await kernelTarget({ recvBufferBytes: 1024, noPeek: true });
    try {
      await t.fill([{ protocol: 'tcp', origSrc: '10.0.0.1', srcCount: 100, origDst: '10.96.0.10', replySrc: POD.v4, count: 300 }]);
      await assert.rejects(t.api.listConntrack(), (e: unknown) => e instanceof NetlinkError && e.code === 'EMSGSIZE' && /MSG_TRUNC/.test(e.message));
      await assert.rejects(t.api.deleteConntrack({ addresses: [POD.v4], match: ['replySrc'] }), (e: unknown) => e instanceof NetlinkError && e.code === 'EMSGSIZE');
      assert.equal((await t.api.conntrackStats()).count, 300, 'the dump was drained: the next request works');
    } finally {
      await t.close();
    }
  });

  it('deletes while a large dump is paused, in small batches, and loses nothing', async () => {
    const t = await kernelTarget({ deleteBatch: 16 });
    try {
      const fill = await t.fill([
        { protocol: 'tcp', origSrc: '10.1.0.0', srcCount: 1000, origDst: '10.96.0.10', replySrc: '10.244.0.0', replySrcCount: 50, count: 20000 },
        { protocol: 'udp', origSrc: 'fd00:1::', srcCount: 1000, origDst: 'fd00:96::10', replySrc: 'fd00:244::', replySrcCount: 50, count: 5000 },
      ]);
      assert.equal(fill.created, 25000);
      // 10 of the 50 v4 backends and 10 of the 50 v6 backends: 4000 + 1000 entries
      const dead = [...Array.from({ length: 10 }, (_, i) => `10.244.0.${i * 5 + 1}`), ...Array.from({ length: 10 }, (_, i) => `fd00:244::${(i * 5 + 1).toString(16)}`)];
      const before = await t.api.listConntrack();
      const deadSet = new Set(dead);
      const result = await t.api.deleteConntrack({ addresses: dead, match: ['replySrc'] });
      assert.deepEqual({ scanned: result.scanned, matched: result.matched, deleted: result.deleted, failed: result.failed }, { scanned: 25000, matched: 5000, deleted: 5000, failed: 0 });
      assert.ok((lastDelete(t.api)?.sends ?? 0) >= 5000 / 16);
      const afterKeys = (await t.api.listConntrack()).map(entryKey).sort();
      assert.deepEqual(afterKeys, before.filter((e) => !deadSet.has(e.reply.src)).map(entryKey).sort());
      assert.deepEqual(conntrackCliKeys(t.ns).sort(), afterKeys);
    } finally {
      await t.close();
    }
  });

  it('two handles deleting the same entries at once: each entry deleted once, the other side counts ENOENT as already gone', async () => {
    const t = await kernelTarget({ deleteBatch: 4096 });
    const other = openNetlink({ netns: t.ns, deleteBatch: 8 });
    try {
      await t.fill([
        { protocol: 'udp', origSrc: '10.0.0.1', srcCount: 1000, origDst: '10.96.0.10', dstPort: 53, replySrc: POD.v4, count: 6000 },
        { protocol: 'udp', origSrc: 'fd00:10::1', srcCount: 1000, origDst: 'fd00:96::10', dstPort: 53, replySrc: POD.v6, count: 2000 },
        { protocol: 'udp', origSrc: '10.9.0.1', srcCount: 100, origDst: '10.96.0.10', dstPort: 53, replySrc: '10.244.7.7', count: 500 },
      ]);
      assert.equal((await t.api.conntrackStats()).count, 8500);
      const options = { addresses: [POD.v4, POD.v6], match: ['replySrc' as const] };
      const [a, b] = await Promise.all([t.api.deleteConntrack(options), other.deleteConntrack(options)]);
      assert.equal(a.deleted + b.deleted, 8000, `each entry deleted exactly once: ${JSON.stringify([a, b])}`);
      assert.equal(a.deleted + b.deleted + a.alreadyGone + b.alreadyGone, a.matched + b.matched);
      assert.equal(a.failed + b.failed, 0);
      assert.ok(a.alreadyGone + b.alreadyGone > 0, 'the dumps overlapped: some deletes found the entry gone (ENOENT)');
      assert.ok((lastDelete(t.api)?.sends ?? 0) >= 2, 'a 4096-entry batch is split to fit one sendmsg');
      assert.equal((await t.api.conntrackStats()).count, 500);
    } finally {
      other.close();
      await t.close();
    }
  });

  it('serializes concurrent calls on one handle and rejects calls after close', async () => {
    const t = await kernelTarget();
    try {
      await t.fill(fixture());
      const [list1, deleted, stats, list2] = await Promise.all([
        t.api.listConntrack(),
        t.api.deleteConntrack({ addresses: [POD.v4, POD.v6], match: ['replySrc'] }),
        t.api.conntrackStats(),
        t.api.listConntrack(),
      ]);
      assert.equal(list1.length, 50);
      assert.equal(deleted.deleted, 20);
      assert.equal(stats.count, 30);
      assert.equal(list2.length, 30);
      const pending = t.api.listConntrack();
      t.api.close();
      assert.equal((await pending).length, 30, 'the call in flight finishes');
      await assert.rejects(t.api.conntrackStats(), (e: unknown) => e instanceof NetlinkError && e.code === 'EBADF');
    } finally {
      deleteNetns(t.ns);
    }
  });

  it('says a caller without CAP_NET_ADMIN needs it', () => {
    const ns = addNetns('perm');
    try {
      const script = `import('${new URL('../lib/index.ts', import.meta.url).pathname}').then(async (m) => { const n = m.openNetlink(); try { await n.conntrackStats(); console.log('no error'); } catch (e) { console.log(e.code + ' ' + e.message); } n.close(); })`;
      const out = inNetns(ns, 'setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', '--inh-caps=-all', process.execPath, '--import', 'tsx', '-e', script]);
      assert.match(out, /^EPERM .*needs CAP_NET_ADMIN/m);
    } finally {
      deleteNetns(ns);
    }
  });
});

/** client --(veth)--> node (nftables DNAT of a service address) --(veth)--> pod, both families. */
describe('conntrack on the kernel: real flows through a DNATed service', { skip }, () => {
  const POD4 = '10.201.2.2';
  const POD6 = 'fd01:2::2';
  const VIP4 = '10.96.7.10';
  const VIP6 = 'fd01:96::10';
  const NODE4 = '10.201.1.1';
  let client = '';
  let node = '';
  let pod = '';
  const children: ChildProcess[] = [];

  before(async () => {
    client = addNetns('c');
    node = addNetns('n');
    pod = addNetns('p');
    wireClientNodePod({ client, node, pod }, '10.201', 'fd01');
    inNetns(node, 'nft', ['-f', '-'], `
      table inet cdct {
        chain pre { type nat hook prerouting priority dstnat;
          ip daddr ${VIP4} tcp dport 80 dnat ip to ${POD4}:8080
          ip daddr ${VIP4} udp dport 53 dnat ip to ${POD4}:8053
          ip6 daddr ${VIP6} tcp dport 80 dnat ip6 to [${POD6}]:8080
          ip6 daddr ${VIP6} udp dport 53 dnat ip6 to [${POD6}]:8053
        }
      }`);
    children.push(await startInNetns(pod, `
      const net = require('net'), dgram = require('dgram');
      net.createServer((s) => s.on('data', (d) => s.write(d))).listen(8080, '::', () => {
        for (const t of ['udp4', 'udp6']) { const u = dgram.createSocket({ type: t, ipv6Only: t === 'udp6' }); u.on('message', (m, r) => u.send(m, r.port, r.address)); u.bind(8053); }
        setTimeout(() => console.log('READY'), 200);
      });`));
    children.push(await startInNetns(node, `
      require('net').createServer((s) => s.on('data', (d) => s.write(d))).listen(9000, '0.0.0.0', () => console.log('READY'));`));
    children.push(await startInNetns(client, `
      const net = require('net'), dgram = require('dgram');
      const keep = [];
      const tcp = (host, port) => new Promise((ok, fail) => { const s = net.connect(port, host, () => { s.write('x'); s.once('data', () => ok()); }); s.on('error', fail); keep.push(s); });
      const udp = (type, host) => new Promise((ok, fail) => { const u = dgram.createSocket(type); keep.push(u); u.on('message', () => ok()); u.on('error', fail); u.send('x', 53, host); });
      Promise.all([tcp('${VIP4}', 80), tcp('${VIP4}', 80), tcp('${VIP4}', 80), tcp('${VIP6}', 80), tcp('${VIP6}', 80),
                   udp('udp4', '${VIP4}'), udp('udp6', '${VIP6}'), tcp('${POD4}', 8080), tcp('${NODE4}', 9000)])
        .then(() => console.log('READY'), (e) => { console.error(e); process.exit(1); });
      setInterval(() => {}, 1000);`));
  });

  after(() => {
    for (const child of children) child.kill('SIGKILL');
    deleteAllNetns();
  });

  it('sees the DNATed flows, deletes exactly the pod\'s entries by reply source, keeps the rest (checked with conntrack -L)', async () => {
    const api = openNetlink({ netns: node });
    try {
      const before = await api.listConntrack();
      const toPod = before.filter((e) => e.reply.src === POD4 || e.reply.src === POD6);
      assert.equal(toPod.filter((e) => e.protocol === 'tcp' && e.original.dstPort === 80).length, 5, 'five service TCP flows');
      assert.equal(toPod.filter((e) => e.protocol === 'udp').length, 2, 'two service UDP flows');
      assert.equal(toPod.length, 8, 'plus one direct TCP flow');
      for (const e of toPod.filter((x) => x.original.dstPort === 80 || x.original.dstPort === 53)) {
        assert.ok(e.statusFlags.includes('DST_NAT'), `${entryKey(e)} is DNATed`);
      }
      assert.ok(toPod.some((e) => e.family === 6 && e.original.dst === VIP6 && e.state === 'ESTABLISHED'));
      assert.ok(before.some((e) => e.original.dst === NODE4 && e.original.dstPort === 9000), 'the node-local flow');
      assert.deepEqual(conntrackCliKeys(node).sort(), before.map(entryKey).sort(), 'conntrack -L sees the same table');

      const result = await api.deleteConntrack({ addresses: [POD4, POD6], match: ['replySrc'], protocols: ['tcp', 'udp', 'sctp', 'ipip'] });
      assert.equal(result.deleted, 8);
      assert.equal(result.failed, 0);
      const left = await api.listConntrack();
      assert.ok(!left.some((e) => e.reply.src === POD4 || e.reply.src === POD6));
      assert.ok(left.some((e) => e.original.dst === NODE4 && e.original.dstPort === 9000), 'the node-local flow survives');
      assert.deepEqual(conntrackCliKeys(node).sort(), left.map(entryKey).sort());
      assert.equal(execFileSync('ip', ['netns', 'exec', node, 'conntrack', '-L', '-r', POD4], { encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] }).trim(), '');
    } finally {
      api.close();
    }
  });
});
