/**
 * `conndrain doctor --netns` against a node namespace with chosen conntrack sysctls, a table
 * filled with real entries (netlink-native's test insert), real DNAT'ed flows to an address no
 * endpoint owns, and an agent stand-in answering /healthz and /metrics inside the namespace.
 * The host kernel has no IPVS: the doctor must say so without calling it a problem (the IPVS
 * findings themselves are unit-tested; the QEMU guest has IPVS).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openNetlink } from 'netlink-native';
import { DnatNode } from '../stale/dnat-node.js';
import { sliceObject, writeInventory } from '../stale/inventory-file.js';
import { insertConntrackForTest } from 'netlink-native/testing';

const node = new DnatNode(`cd9d-${process.pid}-`, 247);
const dir = mkdtempSync(join(tmpdir(), 'cd9d-'));
const endpoints = join(dir, 'endpoints.json');
const AGENT_PORT = 19902;
let agent: ChildProcess | undefined;
let filled = 0;
let max = 0;

interface DoctorJson {
  netns: string | null;
  problems: number;
  findings: Array<{ check: string; value: number | string | null; problem: boolean; why: string }>;
}

function doctor(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'cli/main.ts', 'doctor', '--netns', node.node, ...args], { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const AGENT_STAND_IN = `
const http = require('node:http');
http.createServer((req, res) => {
  if (req.url === '/healthz') { res.end('ok'); return; }
  if (req.url === '/metrics') { res.end('# TYPE conndrain_ipvs_servers_held gauge\\nconndrain_ipvs_servers_held 4\\nconndrain_ipvs_available 0\\n'); return; }
  res.statusCode = 404; res.end();
}).listen(${AGENT_PORT}, '127.0.0.1', () => console.log('listening'));`;

describe('conndrain doctor --netns (real namespace, chosen sysctls, filled table)', () => {
  before(async () => {
    node.setup([{ protocol: 'udp', service: '10.96.0.30', servicePort: 53, target: '10.247.0.7', targetPort: 53 }], {
      'net.netfilter.nf_conntrack_tcp_timeout_established': '432000',
      'net.netfilter.nf_conntrack_udp_timeout': '90',
      'net.netfilter.nf_conntrack_udp_timeout_stream': '100',
    });
    node.sendUdp('10.96.0.30', 53, 2);
    writeInventory(endpoints, [sliceObject('kube-system', 'kube-dns', [{ port: 53, protocol: 'UDP' }], [{ ip: '10.247.0.5', ready: true, serving: true, terminating: false }])]);
    agent = spawn('ip', ['netns', 'exec', node.node, process.execPath, '-e', AGENT_STAND_IN], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve) => agent?.stdout?.once('data', () => resolve()));
  });

  after(async () => {
    if (agent?.pid !== undefined) agent.kill('SIGTERM');
    await sleep(50);
    node.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('judges every reading of the namespace and prints them as JSON', () => {
    const r = doctor('--json', '--agent-url', `http://127.0.0.1:${AGENT_PORT}`, '--endpoints', endpoints);
    assert.equal(r.status, 1, `problems found -> exit 1; ${r.stderr}`);
    const out = JSON.parse(r.stdout) as DoctorJson;
    assert.equal(out.netns, node.node);
    const f = new Map(out.findings.map((x) => [x.check, x]));
    max = Number(readFileSync('/proc/sys/net/netfilter/nf_conntrack_max', 'utf8'));
    assert.equal(f.get('conntrack.fill')?.value, `2/${max} (${Math.round((2 / max) * 1000) / 10}%)`);
    assert.equal(f.get('conntrack.fill')?.problem, false);
    for (const check of ['conntrack.insert_failed', 'conntrack.drop', 'conntrack.early_drop']) {
      assert.deepEqual([f.get(check)?.value, f.get(check)?.problem], [0, false], check);
    }
    assert.deepEqual([f.get('sysctl.nf_conntrack_tcp_timeout_established')?.value, f.get('sysctl.nf_conntrack_tcp_timeout_established')?.problem], [432000, true]);
    assert.deepEqual([f.get('sysctl.nf_conntrack_udp_timeout')?.value, f.get('sysctl.nf_conntrack_udp_timeout')?.problem], [90, true]);
    assert.deepEqual([f.get('sysctl.nf_conntrack_udp_timeout_stream')?.value, f.get('sysctl.nf_conntrack_udp_timeout_stream')?.problem], [100, false]);
    assert.deepEqual([f.get('ipvs')?.value, f.get('ipvs')?.problem], ['absent', false]);
    assert.equal(out.findings.filter((x) => x.check.startsWith('ipvs.')).length, 0);
    assert.deepEqual([f.get('agent')?.value, f.get('agent')?.problem], ['running', false]);
    assert.deepEqual([f.get('agent.ipvs_servers_held')?.value, f.get('agent.ipvs_servers_held')?.problem], [4, false]);
    assert.match(f.get('agent.ipvs_servers_held')?.why ?? '', /conntrack-only/);
    assert.deepEqual([f.get('conntrack.stale')?.value, f.get('conntrack.stale')?.problem], [2, true]);
    assert.match(f.get('conntrack.stale')?.why ?? '', /udp 10\.96\.0\.30:53 \(2\)/);
    assert.equal(out.problems, out.findings.filter((x) => x.problem).length);
    for (const x of out.findings) assert.deepEqual(Object.keys(x).sort(), ['check', 'problem', 'value', 'why']);
  });

  it('calls a table filled past 75% of nf_conntrack_max a problem (count per namespace, limit global)', async () => {
    // Fill past 75% of nf_conntrack_max (global; the count is per namespace), when that is cheap.
    max = Number(readFileSync('/proc/sys/net/netfilter/nf_conntrack_max', 'utf8'));
    const want = Math.ceil(max * 0.8);
    const api = openNetlink({ netns: node.node });
    try {
      const count = want <= 400_000 ? want : 5_000;
      const result = await insertConntrackForTest(api, [{ protocol: 'tcp', origSrc: '10.8.0.1', origDst: '10.9.0.1', replySrc: '10.9.0.1', srcCount: 1000, count, srcPort: 1024, dstPort: 443, replySrcPort: 443, state: 'ESTABLISHED', timeout: 3600, statusFlags: ['SEEN_REPLY', 'ASSURED'] }]);
      filled = result.created;
    } finally {
      api.close();
    }
    const r = doctor('--json', '--no-agent');
    const out = JSON.parse(r.stdout) as DoctorJson;
    const f = new Map(out.findings.map((x) => [x.check, x]));
    // filled + the 2 DNAT'ed flows + a few loopback TCP entries of the agent checks above.
    const [, read, readMax] = /^(\d+)\/(\d+) \(/.exec(String(f.get('conntrack.fill')?.value)) ?? [];
    const count = Number(read);
    assert.equal(Number(readMax), max);
    assert.ok(count >= filled + 2 && count <= filled + 12, `count ${count} after filling ${filled}`);
    const fillProblem = count / max >= 0.75;
    assert.equal(f.get('conntrack.fill')?.problem, fillProblem, 'a problem unless nf_conntrack_max is too high to fill cheaply');
    if (fillProblem) assert.match(f.get('conntrack.fill')?.why ?? '', /Raise net\.netfilter\.nf_conntrack_max/);
    assert.deepEqual([f.get('agent')?.value, f.get('agent')?.problem], ['not checked', false]);
  });

  it('reports an agent that does not answer as a problem, in words', () => {
    const r = doctor('--agent-url', `http://127.0.0.1:${AGENT_PORT + 1}`);
    assert.equal(r.status, 1);
    assert.match(r.stdout, /PROBLEM\s+agent\s+unreachable \(ECONNREFUSED\)/);
    assert.match(r.stdout, new RegExp(`conndrain doctor: netns ${node.node}`));
  });

  it('says what it cannot do when the namespace does not exist', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'cli/main.ts', 'doctor', '--netns', `${node.node}-missing`], { encoding: 'utf8' });
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /Cannot open network namespace|No such file/);
  });
});
