import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { pino } from 'pino';
import type { ConntrackEntry, ListConntrackOptions } from 'netlink-native/types';
import type { ConntrackFillSpec } from 'netlink-native/testing';
import { MemoryConntrack } from 'netlink-native/memory';
import { managedPod, markDeleting } from '../../test/apiserver/pods.js';
import { FakeClock, settle } from '../../test/agent/fake-clock.js';
import { DrainApi } from './drain-api.js';
import { DrainSessions, type DrainSummary } from './drain-sessions.js';
import { DEFAULT_FLOW_TIMEOUTS } from './flows.js';
import { PodCache } from '../pods/pod-cache.js';

/** The native helper's in-memory conntrack stand-in, with failure injection for listConntrack. */
class TableFake extends MemoryConntrack {
  failNext = 0;
  override listConntrack(options?: ListConntrackOptions): Promise<ConntrackEntry[]> {
    if (this.failNext > 0) {
      this.failNext -= 1;
      return Promise.reject(new Error('netlink: injected failure'));
    }
    return super.listConntrack(options);
  }
  /** Replaces the whole table. */
  async set(specs: ConntrackFillSpec[]): Promise<void> {
    for (const e of this.entries()) this.expire(e.id);
    const r = await this.insertConntrackForTest(specs);
    assert.equal(r.created, specs.length);
  }
}

function entry(protocol: 'tcp' | 'udp', dst: string, opts: { state?: string; timeout: number; assured?: boolean }): ConntrackFillSpec {
  return {
    protocol, origSrc: '192.0.2.7', origDst: dst, srcPort: 40000, dstPort: 8080, timeout: opts.timeout,
    ...(opts.state === undefined ? {} : { state: opts.state }),
    statusFlags: opts.assured === true ? ['ASSURED', 'SEEN_REPLY'] : ['SEEN_REPLY'],
  };
}

interface Rig {
  clock: FakeClock;
  table: TableFake;
  cache: PodCache;
  sessions: DrainSessions;
  api: DrainApi;
  port: number;
  started: string[];
  finished: DrainSummary[];
}

let rig: Rig | undefined;
afterEach(async () => {
  rig?.sessions.close();
  await rig?.api.close();
  rig = undefined;
});

async function makeRig(maxDrains = 10): Promise<Rig> {
  const clock = new FakeClock();
  const table = new TableFake();
  const cache = new PodCache(0);
  const started: string[] = [];
  const finished: DrainSummary[] = [];
  const logger = pino({ level: 'silent' });
  const sessions = new DrainSessions(
    { clock, conntrack: table, flowIdleMs: 10_000, pollIntervalMs: 1000, timeouts: DEFAULT_FLOW_TIMEOUTS, logger, onStart: (pod) => started.push(pod.key), onFinish: (_pod, s) => finished.push(s) },
    (id) => cache.byDrain(id),
  );
  const api = new DrainApi({ sessions, maxDrains, logger });
  const port = await api.listen(0, '127.0.0.1');
  rig = { clock, table, cache, sessions, api, port, started, finished };
  return rig;
}

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

function get(port: number, path: string): { answer: Promise<Answer>; abort: () => void } {
  let abort = (): void => undefined;
  const answer = new Promise<Answer>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'GET' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown> }));
    });
    req.on('error', reject);
    req.end();
    abort = () => req.destroy();
  });
  return { answer, abort };
}

async function heldOpen(api: DrainApi, n: number): Promise<void> {
  const deadline = Date.now() + 3000;
  while (api.held !== n) {
    if (Date.now() > deadline) throw new Error(`expected ${n} held requests, have ${api.held}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Whether the promise settled (without waiting for it). */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(() => (done = true), () => (done = true));
  await settle();
  await new Promise((r) => setTimeout(r, 20));
  return done;
}

function addPod(cache: PodCache, name: string, ip: string, annotations: { drain?: string; minDrain?: string } = {}): void {
  const pod = managedPod({ name, nodeName: 'node-a', ips: [ip], drain: annotations.drain ?? '30s', ...(annotations.minDrain === undefined ? {} : { minDrain: annotations.minDrain }), uid: `uid-${name}` });
  markDeleting(pod, 40);
  cache.upsert(pod);
}

test('no open flow: answered at min-drain, not before', async () => {
  const { clock, cache, port, api, started } = await makeRig();
  addPod(cache, 'web', '10.2.0.1', { minDrain: '5s' });
  const { answer } = get(port, '/v1/drain/drain-web');
  await heldOpen(api, 1);
  await clock.advance(4999);
  assert.equal(await settled(answer), false, 'not before min-drain');
  await clock.advance(1);
  const { status, body } = await answer;
  assert.equal(status, 200);
  assert.equal(body.ended, 'idle');
  assert.equal(body.elapsedMs, 5000);
  assert.equal(body.pod, 'shop/web');
  assert.deepEqual(started, ['shop/web']);
});

test('open TCP flow: waits; ends as soon as the flow closes (TIME_WAIT), well before the deadline', async () => {
  const { clock, cache, port, api, table, finished } = await makeRig();
  addPod(cache, 'web', '10.2.0.1', { minDrain: '5s' });
  await table.set([entry('tcp', '10.2.0.1', { state: 'ESTABLISHED', timeout: 431_999 }), entry('tcp', '10.9.9.9', { state: 'ESTABLISHED', timeout: 431_999 })]);
  const { answer } = get(port, '/v1/drain/drain-web');
  await heldOpen(api, 1);
  await clock.advance(8000);
  assert.equal(await settled(answer), false, 'flow open: still draining');
  await table.set([entry('tcp', '10.2.0.1', { state: 'TIME_WAIT', timeout: 120 }), entry('tcp', '10.9.9.9', { state: 'ESTABLISHED', timeout: 431_999 })]);
  await clock.advance(1000);
  const { body } = await answer;
  assert.equal(body.ended, 'idle');
  assert.equal(body.elapsedMs, 9000);
  assert.equal(body.openFlows, 0);
  assert.equal(finished.length, 1);
});

test('flows never close: answered at the drain deadline with ended=timeout; a failing check does not end it', async () => {
  const { clock, cache, port, api, table } = await makeRig();
  addPod(cache, 'web', '10.2.0.1', { drain: '12s', minDrain: '2s' });
  await table.set([entry('udp', '10.2.0.1', { timeout: 119, assured: true })]);
  table.failNext = 1;
  const { answer } = get(port, '/v1/drain/drain-web');
  await heldOpen(api, 1);
  await clock.advance(11_999);
  assert.equal(await settled(answer), false);
  await clock.advance(1);
  const { status, body } = await answer;
  assert.equal(status, 200);
  assert.equal(body.ended, 'timeout');
  assert.equal(body.elapsedMs, 12_000);
  assert.equal(body.openFlows, 1);
});

test('unknown drain id: 404 at once; malformed id and other paths: 404', async () => {
  const { port } = await makeRig();
  assert.equal((await get(port, '/v1/drain/nope').answer).status, 404);
  assert.equal((await get(port, '/v1/drain/..%2F..').answer).status, 404);
  assert.equal((await get(port, '/healthz').answer).status, 404);
});

test('retries join the same drain; a client that disconnects ends only its own wait', async () => {
  const { clock, cache, port, api, started } = await makeRig();
  addPod(cache, 'web', '10.2.0.1', { minDrain: '5s' });
  const first = get(port, '/v1/drain/drain-web');
  await heldOpen(api, 1);
  await clock.advance(2000);
  const second = get(port, '/v1/drain/drain-web');
  const third = get(port, '/v1/drain/drain-web');
  await heldOpen(api, 3);
  first.abort();
  await assert.rejects(first.answer);
  await heldOpen(api, 2);
  await clock.advance(3000);
  const [a, b] = await Promise.all([second.answer, third.answer]);
  assert.equal(a.body.elapsedMs, 5000, 'joined the drain that started with the first request');
  assert.deepEqual(a.body, b.body);
  assert.deepEqual(started, ['shop/web'], 'one drain');
  // A retry after the end gets the same summary at once.
  const late = await get(port, '/v1/drain/drain-web').answer;
  assert.deepEqual(late.body, a.body);
  assert.equal(api.held, 0);
});

test('bounded: beyond maxDrains held requests, 503 with Retry-After', async () => {
  const { cache, port, api } = await makeRig(2);
  addPod(cache, 'a', '10.2.0.1');
  addPod(cache, 'b', '10.2.0.2');
  addPod(cache, 'c', '10.2.0.3');
  const held = [get(port, '/v1/drain/drain-a'), get(port, '/v1/drain/drain-b')];
  await heldOpen(api, 2);
  const refused = await get(port, '/v1/drain/drain-c').answer;
  assert.equal(refused.status, 503);
  for (const h of held) h.abort();
  await Promise.allSettled(held.map((h) => h.answer));
});

test('the pod leaves the API mid-drain: ended=pod-gone', async () => {
  const { clock, cache, port, api, sessions, table } = await makeRig();
  addPod(cache, 'web', '10.2.0.1', { minDrain: '5s' });
  await table.set([entry('tcp', '10.2.0.1', { state: 'ESTABLISHED', timeout: 431_999 })]);
  const { answer } = get(port, '/v1/drain/drain-web');
  await heldOpen(api, 1);
  await clock.advance(7000);
  sessions.podGone('uid-web');
  const { body } = await answer;
  assert.equal(body.ended, 'pod-gone');
  assert.equal(body.elapsedMs, 7000);
});
