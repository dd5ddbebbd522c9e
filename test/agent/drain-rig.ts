/**
 * The real drain API server (agent/drain/drain-api.ts) on loopback, over real drain sessions, a pod
 * cache fed by hand, the in-memory conntrack stand-in and a fake clock: for the tests that pin
 * what the API answers (robustness, start-up hold, pod-gone, flow visibility).
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { pino, type Logger } from 'pino';
import type { ConntrackFillSpec } from 'netlink-native/testing';
import { MemoryConntrack } from 'netlink-native/memory';
import type { FlowVisibility } from '../../src/flow-visibility.js';
import { DrainApi } from '../../agent/drain/drain-api.js';
import { DrainSessions, type DrainSummary } from '../../agent/drain/drain-sessions.js';
import { DEFAULT_FLOW_TIMEOUTS } from '../../agent/drain/flows.js';
import { PodCache } from '../../agent/pods/pod-cache.js';
import { SyncGate } from '../../agent/pods/sync-gate.js';
import { managedPod, markDeleting } from '../apiserver/pods.js';
import { FakeClock, settle } from './fake-clock.js';

export interface DrainRig {
  clock: FakeClock;
  table: MemoryConntrack;
  cache: PodCache;
  sessions: DrainSessions;
  api: DrainApi;
  gate: SyncGate;
  port: number;
  started: string[];
  finished: DrainSummary[];
  close(): Promise<void>;
}

export interface DrainRigOptions {
  maxDrains?: number;
  /** The first pod list is not in yet: the gate starts closed. */
  unsynced?: boolean;
  unknownIdWaitMs?: number;
  flowVisibility?: FlowVisibility;
  logger?: Logger;
  /** Replaces the drain-id lookup (e.g. to make it throw). */
  lookup?: (cache: PodCache, drainId: string) => ReturnType<PodCache['byDrain']>;
}

export async function makeDrainRig(options: DrainRigOptions = {}): Promise<DrainRig> {
  const clock = new FakeClock();
  const table = new MemoryConntrack();
  const cache = new PodCache(0);
  const started: string[] = [];
  const finished: DrainSummary[] = [];
  const logger = options.logger ?? pino({ level: 'silent' });
  const visibility = options.flowVisibility;
  const lookup = options.lookup ?? ((c, id) => c.byDrain(id));
  const sessions = new DrainSessions(
    {
      clock, conntrack: table, flowIdleMs: 10_000, pollIntervalMs: 1000, timeouts: DEFAULT_FLOW_TIMEOUTS, logger,
      onStart: (pod) => started.push(pod.key), onFinish: (_pod, s) => finished.push(s),
      ...(visibility === undefined ? {} : { flowVisibility: () => visibility }),
    },
    (id) => lookup(cache, id),
  );
  const gate = new SyncGate(clock);
  if (options.unsynced !== true) gate.open();
  const api = new DrainApi({ sessions, maxDrains: options.maxDrains ?? 10, logger, synced: gate, ...(options.unknownIdWaitMs === undefined ? {} : { unknownIdWaitMs: options.unknownIdWaitMs }) });
  const port = await api.listen(0, '127.0.0.1');
  return {
    clock, table, cache, sessions, api, gate, port, started, finished,
    close: async () => {
      sessions.close();
      gate.cancel();
      await api.close();
    },
  };
}

export interface Answer {
  status: number;
  body: Record<string, unknown>;
}

/**
 * A request as the kubelet's HTTP hook makes it: one connection, no pool. node:http, not
 * fetch: Node 20's fetch (undici 6) can leave a request pending for good when the server's
 * listener closes while it connects (a kill -9 just after the call; reproduced outside the
 * project, 6 in 28 tries), where a Go client sees a reset.
 */
export function get(port: number, path: string, method = 'GET'): { answer: Promise<Answer>; abort: () => void } {
  let abort = (): void => undefined;
  const answer = new Promise<Answer>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        try {
          resolve({ status: res.statusCode ?? 0, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) });
        } catch (error) {
          reject(new Error(`answer ${res.statusCode ?? 0} is not JSON: ${text.slice(0, 200)}`, { cause: error }));
        }
      });
    });
    req.on('error', reject);
    req.end();
    abort = () => req.destroy();
  });
  return { answer, abort };
}

export async function heldOpen(api: DrainApi, n: number): Promise<void> {
  const deadline = Date.now() + 3000;
  while (api.held !== n) {
    if (Date.now() > deadline) throw new Error(`expected ${n} held requests, have ${api.held}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Whether the promise settled (without waiting for it). */
export async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(() => (done = true), () => (done = true));
  await settle();
  await new Promise((r) => setTimeout(r, 20));
  return done;
}

/** A managed, deleting pod `shop/<name>` with drain id `drain-<name>` and uid `uid-<name>`. */
export function addPod(cache: PodCache, name: string, ip: string, annotations: { drain?: string; minDrain?: string } = {}): void {
  const pod = managedPod({ name, nodeName: 'node-a', ips: [ip], drain: annotations.drain ?? '30s', ...(annotations.minDrain === undefined ? {} : { minDrain: annotations.minDrain }), uid: `uid-${name}` });
  markDeleting(pod, 40);
  cache.upsert(pod);
}

/** An open (ESTABLISHED) TCP conntrack entry to `dst`. */
export function openTcp(dst: string, srcPort = 40000): ConntrackFillSpec {
  return { protocol: 'tcp', origSrc: '192.0.2.7', origDst: dst, srcPort, dstPort: 8080, timeout: 431_999, state: 'ESTABLISHED', statusFlags: ['ASSURED', 'SEEN_REPLY'] };
}

export async function fill(table: MemoryConntrack, specs: ConntrackFillSpec[]): Promise<void> {
  const r = await table.insertConntrackForTest(specs);
  assert.equal(r.created, specs.length);
}
