/**
 * A randomized fault run (issue 24's goal): 2-3 in-process agents over the API stand-in, each
 * node with its own in-memory conntrack and IPVS (one Service, every pod's IP:8080 a real
 * server, as kube-proxy keeps it), managed pods churning (readiness flips, rollouts with a
 * grace, pods replaced with a new or a REUSED IP, quick delete-and-reuse), service entries
 * inserted on every node, and faults at random: watch cuts, 500 and 429 answers, 410s, stalled
 * watches, API server restarts, SIGTERM handovers and kill -9 (an abrupt stop, the next agent
 * on the state file as it was).
 *
 * Invariants:
 *  - no entry whose pod IP a live pod holds (in the API: not terminal, not deleted, not past its
 *    deletionTimestamp) is ever deleted: checked at the moment of the delete (conntrack `destroy`),
 *    except an entry made before that pod took the IP (the old pod's connection: a ghost);
 *  - every gone pod is flushed on every node once the faults stop (an entry left behind has an
 *    IP no live pod holds);
 *  - every preStop call is answered, or, when a kill -9 cut it, the next agent posts DrainInterrupted.
 *
 * The seed is printed; `FAULT_SEED=<n>` replays the same choices (the agents run in real time,
 * so timings are not replayed exactly). `FAULT_QUICK=1`: 2 nodes, 40 pods, 12 s of churn;
 * `FAULT_STRICT=1` also fails on what is known and tolerated by default: an entry deleted within
 * FAIR_MS of a new pod taking its IP (the race any check-then-delete has), and a preStop call
 * answered 404 for a pod the agent had not seen yet (its pod watch broken when the pod came).
 * `FAULT_MS=<ms>` sets the churn's length; `FAULT_TRACE=1` prints the whole timeline. On failure the seed and the last 50 steps are printed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { pino } from 'pino';
import { MemoryConntrack, MemoryIpvs } from 'netlink-native/memory';
import type { ConntrackEntry, IpvsServiceKey } from 'netlink-native/types';
import { loadKubeConnection } from '../../kube/load.js';
import { kubeEventSink } from '../../agent/pods/events.js';
import type { Agent } from '../../agent/agent.js';
import type { JsonObject } from '../apiserver/server.js';
import { managedPod, markDeleting, setReady } from '../apiserver/pods.js';
import { AgentRig, memoryNetlinkWithEvents } from './agent-rig.js';
import { get } from './drain-rig.js';

const QUICK = process.env.FAULT_QUICK !== undefined && process.env.FAULT_QUICK !== '' && process.env.FAULT_QUICK !== '0';
const SEED = process.env.FAULT_SEED !== undefined && process.env.FAULT_SEED !== '' ? Number(process.env.FAULT_SEED) >>> 0 : (Math.random() * 2 ** 32) >>> 0;
const NODES = QUICK ? 2 : 3;
const PODS_PER_NODE = QUICK ? 20 : 30;
const CHURN_MS = Number(process.env.FAULT_MS ?? (QUICK ? 12_000 : 40_000));
const TICK_MS = 100;
/**
 * How long after the faults stop every gone pod must be flushed: two waits of the relist
 * backoff's cap (`--relist-backoff-max`, 30 s) plus a margin. The backoff stays at its cap for
 * 2 min after the last failure (as client-go's reflector), so a watch that failed just before
 * the faults stopped waits 30 s, and when its late re-watch finds its resourceVersion gone
 * (410: the API server restarted meanwhile) the relist waits 30 s more. Until then nothing is
 * due on that node for the pods that went, so nothing hurries it. Seen: FAULT_SEED=1949132801
 * (caught up 29.5 s after the faults stopped), FAULT_SEED=3326130295 and 861372242 (a 410 at
 * +17 s, relisted at +47 s).
 */
const SETTLE_MS = 65_000;
const STRICT = process.env.FAULT_STRICT !== undefined && process.env.FAULT_STRICT !== '' && process.env.FAULT_STRICT !== '0';
/** A pod younger than this (since its creation in the API) may be unseen by an agent without any fault. */
const FAIR_MS = 1000;
/**
 * While an agent bug this run finds is open, set this to what is known of it: the run is then a
 * todo (it runs, prints its seed and violations, and does not fail the suite; FAULT_STRICT=1
 * makes it fail). None is open: a failure fails the suite, with its seed to replay. What earlier
 * seeds found is in docs/testing.md and kept as plain cases.
 */
const OPEN_BUG: string | undefined = undefined;
const SVC: IpvsServiceKey = { family: 4, protocol: 'tcp', address: '10.96.0.10', port: 80 };

/** mulberry32: small, seedable, good enough to pick steps. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Life { dead: boolean }

interface NodeRig {
  name: string;
  index: number;
  ct: MemoryConntrack;
  ipvs: MemoryIpvs;
  stateFile: string;
  agent: Agent | undefined;
  life: Life | undefined;
  drainPort: number;
  generation: number;
  busy: boolean;
  free: string[];
  /** The node's agents' info log lines (every generation), the last LOG_LINES of them. */
  logLines: string[];
}

/** Agent log lines kept per node for a failure report (info level: what an operator would see). */
const LOG_LINES = 20_000;

/** Log lines that repeat while a drain lasts (the test's proxy deletes held servers every tick): not kept. */
const REPEATING = 'the proxy deleted a held server';

/**
 * A pino destination keeping the lines in `lines` (the oldest dropped past LOG_LINES). The
 * repeating lines are not kept: they filled the buffer, and a report of FAULT_SEED=3636390768
 * lost the first agent's lines about the call it was about.
 */
function memoryLog(lines: string[]): { write(line: string): void } {
  return {
    write(line: string): void {
      if (line.includes(REPEATING)) return;
      lines.push(line.trimEnd());
      if (lines.length > LOG_LINES * 1.25) lines.splice(0, lines.length - LOG_LINES);
    },
  };
}

/**
 * The lines of `lines` that name any of `words` (a pod's name as `"shop/p1"`, an IP), the last
 * `max` of them, each as `+<ms since t0> <msg> <its other fields>` (no stacks).
 */
function linesNaming(lines: readonly string[], words: readonly string[], t0: number, max = 40): string[] {
  return lines.filter((l) => words.some((w) => l.includes(w))).slice(-max).map((l) => {
    try {
      const { time, msg, err, level: _l, pid: _p, hostname: _h, node: _n, ...rest } = JSON.parse(l) as Record<string, unknown>;
      const error = err === undefined ? '' : ` err=${String((err as { message?: unknown }).message)}`;
      return `+${Number(time) - t0}ms ${String(msg)}${error} ${JSON.stringify(rest)}`.slice(0, 400);
    } catch {
      return l.slice(0, 400);
    }
  });
}

/** Since when a node's kept log goes (its buffer drops the oldest lines). */
function keptFrom(lines: readonly string[], t0: number): string {
  if (lines.length === 0) return 'no line';
  try {
    return `+${Number((JSON.parse(lines[0] ?? '{}') as { time?: unknown }).time) - t0}ms`;
  } catch {
    return 'an unparsed line';
  }
}

interface DrainCall {
  id: number;
  pod: string;
  drainId: string;
  node: string;
  agent: Agent;
  at: number;
  outcome?: { kind: 'answered'; status: number; ended: unknown } | { kind: 'cut'; error: string };
  /** Cut by a kill -9: whether the state file the next agent read had the session. */
  killed?: { saved: boolean; at: number };
  settled: Promise<void>;
}

interface Inserted { pod: string; uid: string; ip: string; at: number }

test(`randomized faults: no live entry deleted, gone pods flushed, preStop calls answered or reported (FAULT_SEED=${SEED})`, { timeout: CHURN_MS + 150_000, todo: STRICT || OPEN_BUG === undefined ? false : OPEN_BUG }, async (t) => {
  const rand = prng(SEED);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const chance = (p: number): boolean => rand() < p;
  const between = (lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1));
  console.log(`fault run: FAULT_SEED=${SEED} nodes=${NODES} pods=${NODES * PODS_PER_NODE} churn=${CHURN_MS}ms${QUICK ? ' (quick)' : ''}`);

  const rig = new AgentRig('cd-fault');
  await rig.start();
  const server = rig.server;
  const apiPort = Number(new URL(server.url).port);
  const t0 = Date.now();
  const timeline: string[] = [];
  /** The churn loop's step (scheduled actions count in steps). */
  let tick = 0;
  const log = (what: string): void => {
    timeline.push(`+${String(Date.now() - t0).padStart(6)}ms t${String(tick).padStart(3, '0')} ${what}`);
  };
  const violations: string[] = [];
  /** The last 50 steps when the first live entry was deleted. */
  const firstContext: string[] = [];
  const stats = { deletes: 0, inserts: 0, rollouts: 0, reuses: 0, quickReuses: 0, flips: 0, faults: {} as Record<string, number>, drainCalls: 0, races: 0, oldGhosts: 0, staleNotFound: 0 };
  const fault = (kind: string, detail = ''): void => {
    stats.faults[kind] = (stats.faults[kind] ?? 0) + 1;
    log(`FAULT ${kind}${detail === '' ? '' : ` ${detail}`}`);
  };

  // --- the truth: the API stand-in's pods -------------------------------------------------
  const podIps = (p: JsonObject): string[] => ((p.status as { podIPs?: Array<{ ip: string }> }).podIPs ?? []).map((x) => x.ip);
  const nameOf = (p: JsonObject): string => String(p.metadata?.name);
  const uidOf = (p: JsonObject): string => String(p.metadata?.uid);
  const deletionOf = (p: JsonObject): number | undefined => {
    const dt = p.metadata?.deletionTimestamp;
    return typeof dt === 'string' ? Date.parse(dt) : undefined;
  };
  const createdOf = (p: JsonObject): number => Date.parse(String(p.metadata?.creationTimestamp));
  const isLive = (p: JsonObject, now = Date.now()): boolean => {
    const phase = (p.status as { phase?: string }).phase;
    if (phase === 'Succeeded' || phase === 'Failed') return false;
    const del = deletionOf(p);
    return del === undefined || del > now;
  };
  const liveHolders = (ip: string): JsonObject[] => server.listPods().filter((p) => isLive(p) && podIps(p).includes(ip));

  // --- nodes --------------------------------------------------------------------------------
  const inserted = new Map<string, Inserted>();
  const entryKey = (node: string, e: ConntrackEntry): string => `${node}|${e.original.src}|${e.original.srcPort ?? ''}`;
  const nodes: NodeRig[] = [];
  for (let i = 0; i < NODES; i++) {
    const name = `fault-${i}`;
    const n: NodeRig = {
      name, index: i, ct: new MemoryConntrack(), ipvs: new MemoryIpvs(), stateFile: rig.path(`${name}.json`),
      agent: undefined, life: undefined, drainPort: 0, generation: 0, busy: false,
      free: Array.from({ length: 200 }, (_, k) => `10.${40 + i}.0.${k + 1}`), logLines: [],
    };
    await n.ipvs.addService({ key: SVC, scheduler: 'mh' });
    n.ct.subscribe((kind, entry) => {
      if (kind !== 'destroy') return;
      stats.deletes++;
      const ip = entry.reply.src;
      const now = Date.now();
      const all = liveHolders(ip);
      if (all.length === 0) return;
      // A holder the agent could not have seen yet (created less than FAIR_MS ago) is a race any
      // check-then-delete has, not a stale view: counted, a violation only under FAULT_STRICT.
      const holders = all.filter((h) => now - createdOf(h) >= FAIR_MS);
      if (holders.length === 0 && !STRICT) {
        stats.races++;
        log(`race on ${name}: an entry of ${ip} deleted ${all.map((h) => `${now - createdOf(h)} ms after ${nameOf(h)} took the IP`).join(', ')}`);
        return;
      }
      const was = inserted.get(entryKey(name, entry));
      // An entry made before every live holder took the IP is the old pod's connection (a ghost),
      // whatever IP it shares: deleting it cuts nobody. Counted, never a violation.
      if (was !== undefined && was.at < Math.min(...all.map((h) => createdOf(h)))) {
        stats.oldGhosts++;
        log(`old ghost on ${name}: an entry of ${ip} made for ${was.pod} deleted after ${all.map((h) => nameOf(h)).join(', ')} took the IP`);
        return;
      }
      const stack = (new Error().stack ?? '').split('\n').filter((l) => l.includes('/agent/') && !l.includes('/test/agent/')).slice(0, 6).map((l) => l.trim()).join(' <- ');
      const holder = (holders.length > 0 ? holders : all).map((h) => `${nameOf(h)}(${uidOf(h).slice(0, 8)}${deletionOf(h) === undefined ? '' : `, deleting until +${deletionOf(h)! - t0}ms`})`).join(',');
      const v = `LIVE ENTRY DELETED on ${name}: ${entry.original.src}:${entry.original.srcPort} -> ${ip}:8080 (inserted for ${was?.pod ?? '?'} at +${was === undefined ? '?' : was.at - t0}ms), IP held by live ${holder} | ${stack}`;
      violations.push(v);
      log(v);
      if (firstContext.length === 0) firstContext.push(...timeline.slice(-50));
    });
    nodes.push(n);
  }

  const makeNodeAgent = async (n: NodeRig): Promise<{ agent: Agent; life: Life }> => {
    const life: Life = { dead: false };
    const base = memoryNetlinkWithEvents(n.ct, n.ipvs);
    const sink = kubeEventSink(await loadKubeConnection({ kubeconfig: rig.kubeconfig }));
    // A killed process acts no more: its deletes, IPVS writes and Events are dropped from the kill on.
    const netlink: typeof base = {
      ...base,
      deleteConntrack: (o) => life.dead ? Promise.resolve({ scanned: 0, matched: 0, deleted: 0, alreadyGone: 0, failed: 0, byProtocol: {}, ms: 0 }) : base.deleteConntrack(o),
      deleteConntrackEntries: (e) => life.dead ? Promise.resolve({ deleted: 0, alreadyGone: 0, failed: 0, byProtocol: {}, ms: 0 }) : base.deleteConntrackEntries(e),
      setDestinationWeight: (s, d, w) => life.dead ? Promise.resolve() : base.setDestinationWeight(s, d, w),
      setDestinationWeights: (e) => life.dead ? Promise.resolve(e.map(() => undefined)) : base.setDestinationWeights(e),
      addDestination: (s, d) => life.dead ? Promise.resolve() : base.addDestination(s, d),
      deleteDestination: (s, d) => life.dead ? Promise.resolve() : base.deleteDestination(s, d),
      openConntrackEvents: async (o) => {
        const index = await base.openConntrackEvents(o);
        return new Proxy(index, {
          get(target, prop, receiver) {
            if (prop === 'deleteFlowsOf') return (a: string[]) => life.dead ? Promise.resolve({ fresh: false, deleted: 0, alreadyGone: 0, failed: 0, byProtocol: {}, ms: 0 }) : target.deleteFlowsOf(a);
            if (prop === 'verify') return (a: string[]) => life.dead ? Promise.resolve({ deleted: 0, alreadyGone: 0, failed: 0, scanned: 0, ms: 0 }) : target.verify(a);
            const value = Reflect.get(target, prop, receiver) as unknown;
            return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
          },
        });
      },
    };
    const agent = await rig.makeAgent(n.name, netlink, {
      logger: pino({ level: 'info' }, memoryLog(n.logLines)),
      stateFile: n.stateFile,
      flags: { flowPollInterval: '50ms' },
      // A killed process posts nothing and so records nothing (a faked success would mark its DrainInterrupted recorded).
      deps: { eventSink: (ns, body) => life.dead ? Promise.reject(new Error('killed: nothing is sent')) : sink(ns, body), datapathProbe: { listLinks: () => Promise.resolve(['lo', 'eth0']), listBpfPins: () => Promise.resolve([]) } },
    });
    return { agent, life };
  };

  const startAgent = async (n: NodeRig, why: string): Promise<Agent> => {
    const { agent, life } = await makeNodeAgent(n);
    const ports = await agent.start();
    n.generation++;
    n.agent = agent;
    n.life = life;
    n.drainPort = ports.drainPort;
    log(`${n.name}: agent #${n.generation} ${agent.instance.instance} started (${why}), drain port ${ports.drainPort}`);
    return agent;
  };

  // --- pods -----------------------------------------------------------------------------------
  let podSeq = 0;
  let srcSeq = 0;
  const podNode = new Map<string, NodeRig>();
  const goneAt = new Map<string, string>();
  const createPod = (n: NodeRig, ip: string, why: string): string => {
    const name = `p${++podSeq}`;
    const i = n.free.indexOf(ip);
    if (i >= 0) n.free.splice(i, 1);
    server.putPod(managedPod({ name, nodeName: n.name, ips: [ip], uid: `uid-${name}-${SEED.toString(36)}`, drain: '4s', minDrain: '0s', ready: !chance(0.1) }));
    podNode.set(name, n);
    log(`+pod ${name} ${ip} on ${n.name} (${why})`);
    return name;
  };
  const removePod = (name: string, why: string): void => {
    const p = server.getPod('shop', name);
    if (p === undefined) return;
    server.deletePod('shop', name);
    goneAt.set(name, `+${Date.now() - t0}ms t${tick} ${why}${deletionOf(p) === undefined ? '' : ' after deleting'}`);
    const n = podNode.get(name)!;
    for (const ip of podIps(p)) if (!n.free.includes(ip) && liveHolders(ip).length === 0 && !server.listPods().some((q) => podIps(q).includes(ip))) n.free.push(ip);
    log(`-pod ${name} ${podIps(p).join()} DELETED (${why})`);
  };
  const servingPods = (): JsonObject[] => server.listPods().filter((p) => deletionOf(p) === undefined);
  const insertFor = async (p: JsonObject, n: NodeRig): Promise<void> => {
    const ip = podIps(p)[0]!;
    const seq = ++srcSeq;
    const origSrc = `192.0.${2 + Math.floor(seq / 60000)}.${1 + (seq % 250)}`;
    const srcPort = 1024 + (seq % 60000);
    const r = await n.ct.insertConntrackForTest([{ protocol: 'tcp', origSrc, srcPort, origDst: SVC.address, dstPort: 80, replySrc: ip, replySrcPort: 8080, state: 'ESTABLISHED', timeout: 3600, dnat: true, statusFlags: ['ASSURED', 'SEEN_REPLY'] }]);
    if (r.created === 1) {
      stats.inserts++;
      inserted.set(`${n.name}|${origSrc}|${srcPort}`, { pod: nameOf(p), uid: uidOf(p), ip, at: Date.now() });
    }
  };

  // kube-proxy on every node: every ready, not terminating pod a real server; others removed (the agent re-creates its holds).
  const kubeProxySync = async (): Promise<void> => {
    const desired = new Set(server.listPods().filter((p) => deletionOf(p) === undefined && isLive(p) && ((p.status as { conditions?: Array<{ type: string; status: string }> }).conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')).flatMap(podIps));
    for (const n of nodes) {
      const have = await n.ipvs.listDestinations(SVC);
      for (const d of have) if (!desired.has(d.address)) n.ipvs.proxyDeleteDestination(SVC, { address: d.address, port: d.port });
      const present = new Set(have.map((d) => d.address));
      for (const ip of desired) if (!present.has(ip)) await n.ipvs.addDestination(SVC, { address: ip, port: 8080, weight: 1 }).catch(() => undefined);
    }
  };

  // --- preStop calls ------------------------------------------------------------------------
  const calls: DrainCall[] = [];
  const callDrain = (name: string): void => {
    const n = podNode.get(name)!;
    const agent = n.agent;
    if (agent === undefined || n.life?.dead === true) {
      log(`preStop ${name}: no agent on ${n.name} (kill -9 gap), call not made`);
      return;
    }
    const call: DrainCall = { id: calls.length, pod: name, drainId: `drain-${name}`, node: n.name, agent, at: Date.now(), settled: Promise.resolve() };
    // node:http, as drain-rig's get says why (fetch could hang when a kill -9 races its connect).
    call.settled = get(n.drainPort, `/v1/drain/${call.drainId}`).answer.then((res) => {
      call.outcome = { kind: 'answered', status: res.status, ended: res.body.ended };
      log(`preStop ${name} answered ${res.status} ${String(res.body.ended)}`);
    }, (error: unknown) => {
      call.outcome = { kind: 'cut', error: String((error as { cause?: unknown }).cause ?? error) };
      log(`preStop ${name} cut (${call.outcome.error})`);
    });
    calls.push(call);
    stats.drainCalls++;
  };

  // --- scheduled actions --------------------------------------------------------------------
  const pending: Array<{ at: number; seq: number; label: string; run: () => void | Promise<void> }> = [];
  const later = (ms: number, label: string, run: () => void | Promise<void>): void => {
    // In ticks, not wall time: the steps and their order follow from the seed alone.
    pending.push({ at: tick + Math.ceil(ms / TICK_MS), seq: pending.length + tick * 1000, label, run });
  };
  const runDue = async (all = false): Promise<void> => {
    pending.sort((a, b) => a.at - b.at || a.seq - b.seq);
    while (pending.length > 0 && (all || pending[0]!.at <= tick)) await pending.shift()!.run();
  };

  // --- faults -------------------------------------------------------------------------------
  const tasks: Array<Promise<void>> = [];
  let stalled = false;
  let apiDown = false;
  const background = (p: Promise<void>): void => {
    tasks.push(p.catch((error: unknown) => {
      violations.push(`fault task failed: ${String(error)}`);
      log(`fault task failed: ${String(error)}`);
    }));
  };
  const restartApi = async (downMs: number): Promise<void> => {
    apiDown = true;
    await server.close();
    await sleep(downMs);
    await server.start(apiPort);
    apiDown = false;
    log(`API server back on ${apiPort}`);
  };
  const handOver = async (n: NodeRig): Promise<void> => {
    n.busy = true;
    const older = n.agent!;
    const newer = await startAgent(n, 'SIGTERM handover: the newer starts on the same state file');
    const deadline = Date.now() + 8000;
    while (Date.now() < deadline) {
      try {
        if ((JSON.parse(readFileSync(n.stateFile, 'utf8')) as { owner?: { instance?: string } }).owner?.instance === newer.instance.instance) break;
      } catch { /* not written yet */ }
      await sleep(20);
    }
    log(`${n.name}: SIGTERM to ${older.instance.instance}`);
    await older.handOver();
    log(`${n.name}: ${older.instance.instance} handed over and stopped`);
    n.busy = false;
  };
  const kill9 = async (n: NodeRig, gapMs: number): Promise<void> => {
    n.busy = true;
    const older = n.agent!;
    const life = n.life!;
    const saved = existsSync(n.stateFile) ? readFileSync(n.stateFile, 'utf8') : undefined;
    life.dead = true;
    n.agent = undefined;
    const killedAt = Date.now();
    for (const c of calls) if (c.agent === older && c.outcome === undefined) c.killed = { saved: saved?.includes(`"${c.drainId}"`) === true, at: killedAt };
    await older.stop();
    log(`${n.name}: ${older.instance.instance} stopped in ${Date.now() - killedAt} ms`);
    // What a kill -9 leaves: the state file as the process last wrote it while running.
    if (saved === undefined) rmSync(n.stateFile, { force: true });
    else writeFileSync(n.stateFile, saved);
    await sleep(gapMs);
    await startAgent(n, `after a kill -9 of ${older.instance.instance} and ${gapMs} ms without an agent`);
    n.busy = false;
  };
  const injectFault = (): void => {
    const kinds = ['watch-cut', '500', '429', '410', 'stall', 'api-restart', 'handover', 'kill-9'];
    const kind = pick(kinds);
    switch (kind) {
      case 'watch-cut':
        fault(kind);
        server.dropWatches();
        break;
      case '500':
      case '429': {
        const count = between(1, 5);
        const match = pick(['list', 'watch', 'any'] as const);
        fault(kind, `x${count} ${match}`);
        server.failNext(count, Number(kind), match);
        break;
      }
      case '410':
        fault(kind);
        server.expireResourceVersions();
        break;
      case 'stall': {
        if (stalled) return;
        const ms = between(1000, 4000);
        fault(kind, `${ms}ms`);
        stalled = true;
        server.stallWatches(true);
        later(ms, 'unstall', () => {
          stalled = false;
          server.stallWatches(false);
          log('watches unstalled');
        });
        break;
      }
      case 'api-restart': {
        if (apiDown) return;
        const ms = between(300, 2000);
        fault(kind, `down ${ms}ms`);
        background(restartApi(ms));
        break;
      }
      case 'handover':
      case 'kill-9': {
        const idle = nodes.filter((x) => !x.busy && x.agent !== undefined);
        if (idle.length === 0) return;
        const n = pick(idle);
        if (kind === 'handover') {
          fault(kind, n.name);
          background(handOver(n));
        } else {
          const gap = between(200, 3000);
          fault(kind, `${n.name} gap ${gap}ms`);
          background(kill9(n, gap));
        }
        break;
      }
    }
  };

  // --- churn ----------------------------------------------------------------------------------
  const churn = async (): Promise<void> => {
    const r = rand();
    const serving = servingPods();
    if (serving.length === 0) return;
    const p = pick(serving);
    const name = nameOf(p);
    const n = podNode.get(name)!;
    if (r < 0.35) {
      const ready = !((p.status as { conditions?: Array<{ status: string }> }).conditions?.[0]?.status === 'True');
      server.modifyPod('shop', name, (q) => setReady(q, ready));
      stats.flips++;
      log(`~pod ${name} ready=${ready}`);
    } else if (r < 0.8) {
      // A rollout step: the old pod deletes with a grace (its preStop call maybe), then goes;
      // the new one comes at once with a new IP, or after the old one with its IP.
      const grace = between(1, 3);
      server.modifyPod('shop', name, (q) => markDeleting(q, grace));
      stats.rollouts++;
      log(`~pod ${name} deleting, grace ${grace}s`);
      if (chance(0.5)) callDrain(name);
      const reuse = chance(0.5);
      const ip = podIps(p)[0]!;
      if (!reuse && n.free.length > 0) createPod(n, n.free.splice(Math.floor(rand() * n.free.length), 1)[0]!, `replaces ${name}`);
      later(grace * 1000 + between(0, 1500), `delete ${name}`, () => {
        removePod(name, 'grace over');
        if (reuse) {
          stats.reuses++;
          const created = createPod(n, ip, `replaces ${name}, REUSED IP`);
          if (chance(0.6)) {
            const q = server.getPod('shop', created)!;
            for (const m of nodes) if (chance(0.7)) void insertFor(q, m);
          }
        }
      });
    } else if (r < 0.93) {
      // Deleted outright, its IP given to a new pod on the same node at once.
      const ip = podIps(p)[0]!;
      server.modifyPod('shop', name, (q) => markDeleting(q, 0));
      removePod(name, 'force delete');
      stats.quickReuses++;
      const created = createPod(n, ip, `QUICK REUSE of ${name}'s IP`);
      const q = server.getPod('shop', created)!;
      for (const m of nodes) if (chance(0.7)) await insertFor(q, m);
    } else {
      // A scale-up on some node.
      const m = pick(nodes);
      if (m.free.length > 0 && server.listPods().length < NODES * PODS_PER_NODE * 1.3) createPod(m, m.free.splice(Math.floor(rand() * m.free.length), 1)[0]!, 'scale-up');
    }
  };

  let failed = true;
  try {
    for (const n of nodes) for (let k = 0; k < PODS_PER_NODE; k++) createPod(n, n.free.shift()!, 'initial');
    await kubeProxySync();
    for (const p of server.listPods()) for (const n of nodes) if (chance(0.5)) await insertFor(p, n);
    await Promise.all(nodes.map((n) => startAgent(n, 'initial')));
    for (tick = 0; tick < CHURN_MS / TICK_MS; tick++) {
      const tickStarted = Date.now();
      await runDue();
      const steps = between(0, 2);
      for (let s = 0; s < steps; s++) await churn();
      if (chance(0.7)) {
        const serving = servingPods();
        for (let k = between(1, 3); k > 0 && serving.length > 0; k--) await insertFor(pick(serving), pick(nodes));
      }
      if (chance(0.06)) injectFault();
      await kubeProxySync();
      await sleep(Math.max(10, TICK_MS - (Date.now() - tickStarted)));
    }

    // The faults stop: watches flow, the API is up, every node has an agent; the pending deletes happen.
    log('--- faults stop');
    server.clearFailures();
    if (stalled) {
      stalled = false;
      server.stallWatches(false);
    }
    await Promise.all(tasks);
    await runDue(true);
    server.clearFailures();
    await kubeProxySync();
    log('--- settling');

    // Every gone pod flushed: no entry left whose IP no live pod holds.
    const ghosts = (): string[] => nodes.flatMap((n) => n.ct.entries().filter((e) => liveHolders(e.reply.src).length === 0).map((e) => {
      const was = inserted.get(entryKey(n.name, e));
      return `${n.name}: ${e.original.src}:${e.original.srcPort} -> ${e.reply.src} (pod ${was?.pod ?? '?'} of ${was === undefined ? '?' : podNode.get(was.pod)?.name}, inserted +${was === undefined ? '?' : was.at - t0}ms, gone ${was === undefined ? '?' : goneAt.get(was.pod) ?? '?'})`;
    }));
    const settleUntil = Date.now() + SETTLE_MS;
    while (ghosts().length > 0 && Date.now() < settleUntil) await sleep(100);
    const left = ghosts();
    if (left.length > 0) {
      const lines = left.slice(0, 20);
      for (const n of nodes) {
        if (!left.some((l) => l.startsWith(`${n.name}:`)) || n.agent === undefined) continue;
        const text = await n.agent.metrics.registry.metrics();
        const keep = text.split('\n').filter((l) => !l.startsWith('#') && /stale_view|endpoint|watch|relist|list_|ghost|flush|sweep/.test(l));
        // A peek at the endpoint side's state for the report (private fields; diagnostics only).
        const ep = (n.agent as unknown as { endpoints?: { freshening?: boolean; deadlineTimer?: { at: number }; isSynced?: boolean; slices?: { live?: boolean; progressAgeMs?: () => number }; planner?: { nextDeadline?: number } } }).endpoints;
        const peek = ep === undefined ? {} : {
          freshening: ep.freshening, deadlineTimerAt: ep.deadlineTimer === undefined ? undefined : ep.deadlineTimer.at - Date.now(), synced: ep.isSynced,
          slicesLive: ep.slices?.live, slicesProgressAgeMs: ep.slices?.progressAgeMs?.(), nextDeadlineIn: ep.planner?.nextDeadline === undefined ? undefined : ep.planner.nextDeadline - Date.now(),
        };
        const mine = [...new Set(n.ct.entries().filter((e) => liveHolders(e.reply.src).length === 0).map((e) => inserted.get(entryKey(n.name, e))).filter((x) => x !== undefined))].slice(0, 4);
        const internals = ep as unknown as { index?: { holdersOf?: (a: string) => Map<string, unknown> | undefined }; planner?: { records?: Map<string, unknown> } } | undefined;
        for (const g of mine) lines.push(`${n.name} sees ${g.pod} (${g.uid}): endpoint holders of ${g.ip} ${JSON.stringify([...(internals?.index?.holdersOf?.(g.ip)?.keys() ?? [])])}, record ${JSON.stringify(internals?.planner?.records?.get(g.uid))}`);
        // What the node's agents logged about those pods and addresses, and about their watches and sweeps.
        const words = [...mine.flatMap((g) => [`"shop/${g.pod}"`, `"${g.ip}"`]), 'relist', 'sweep', 'watch failed'];
        lines.push(`${n.name} agent log (info) naming ${mine.map((g) => `${g.pod} ${g.ip}`).join(', ')}, relists and sweeps:\n      ${linesNaming(n.logLines, words, t0, 80).join('\n      ')}`);
        const tf = (n.agent as unknown as { conntrack?: { targets?: { running?: boolean; pending?: unknown[]; timer?: unknown; stopped?: boolean } } }).conntrack?.targets;
        lines.push(`${n.name} target flush: ${JSON.stringify({ running: tf?.running, pending: tf?.pending?.length, timer: tf?.timer !== undefined, stopped: tf?.stopped })}`);
        lines.push(`${n.name} agent ${n.agent.instance.instance}: readiness ${JSON.stringify(n.agent.readiness())}; endpoints ${JSON.stringify(peek)}; ${keep.filter((l) => !l.includes('_bucket')).join(' | ')}`);
      }
      violations.push(`GONE PODS NOT FLUSHED ${SETTLE_MS / 1000}s after the faults stopped: ${left.length} entries\n    ${lines.join('\n    ')}`);
    }

    // Every preStop call answered, or, cut by a kill -9, reported by the next agent.
    await Promise.race([Promise.all(calls.map((c) => c.settled)), sleep(15_000)]);
    const interrupted = (pod: string): boolean => server.events.some((e) => (e.involvedObject as { name?: string }).name === pod && e.reason === 'DrainInterrupted');
    const eventsUntil = Date.now() + 10_000;
    const unreported = (): DrainCall[] => calls.filter((c) => c.outcome?.kind === 'cut' && c.killed?.saved === true && !interrupted(c.pod));
    while (unreported().length > 0 && Date.now() < eventsUntil) await sleep(100);
    let cutUnsaved = 0;
    for (const c of calls) {
      const what = `preStop ${c.pod} on ${c.node} (called +${c.at - t0}ms)`;
      if (c.outcome === undefined) {
        // What the node's agents logged about the call (its drain id) and the pod.
        const n = nodes.find((x) => x.name === c.node);
        const killed = c.killed === undefined ? 'not killed' : `its agent killed at +${c.killed.at - t0}ms (session ${c.killed.saved ? '' : 'not '}in the state file)`;
        violations.push(`${what}: never answered; ${killed}; agent log naming it (kept from ${n === undefined ? '?' : keptFrom(n.logLines, t0)}):\n      ${n === undefined ? '' : linesNaming(n.logLines, [`"${c.drainId}"`, `"shop/${c.pod}"`, 'agent stopped', 'failed to stop', 'agent started', 'drain API'], t0, 30).join('\n      ')}`);
      }
      else if (c.outcome.kind === 'answered') {
        if (c.outcome.status === 404 && !STRICT) {
          // Known: a call for a pod the agent has not seen is held until its pod watch relists
          // (fault-found.test.ts); a pod created in the watch's gap and gone before the relist is
          // in no list, and the call is answered 404 (the pod is gone: nothing left to drain).
          stats.staleNotFound++;
          log(`KNOWN: ${what} answered 404 (the agent had not seen the pod)`);
        } else if (c.outcome.status !== 200) violations.push(`${what}: answered ${c.outcome.status} ${String(c.outcome.ended)}`);
      } else if (c.killed === undefined) violations.push(`${what}: cut without a kill -9 (${c.outcome.error})`);
      else if (!c.killed.saved) cutUnsaved++;
      else if (!interrupted(c.pod)) {
        const n = nodes.find((x) => x.name === c.node);
        violations.push(`${what}: cut by the kill -9 at +${c.killed.at - t0}ms, its session in the state file, but no DrainInterrupted Event; agent log naming it, and state files:\n      ${n === undefined ? '' : linesNaming(n.logLines, [`"${c.drainId}"`, `"shop/${c.pod}"`, 'state file', 'Event'], t0, 40).join('\n      ')}`);
      }
    }

    const summary = `seed ${SEED}: ${podSeq} pods (${stats.rollouts} rollouts, ${stats.reuses} IP reuses, ${stats.quickReuses} quick reuses, ${stats.flips} flips), ${stats.inserts} entries inserted, ${stats.deletes} deleted, ${stats.drainCalls} preStop calls (${cutUnsaved} cut by a kill -9 before the session reached the state file), faults ${JSON.stringify(stats.faults)}, API resourceVersion ${server.resourceVersion}; known: ${stats.races} entries deleted < ${FAIR_MS} ms after a new pod took their IP, ${stats.oldGhosts} old pods' entries deleted after their IP was reused (made before the new pod: not its connections), ${stats.staleNotFound} preStop calls answered 404 for a pod the agent had not seen yet`;
    console.log(`fault run: ${summary}`);
    t.diagnostic(summary);
    failed = violations.length > 0;
    assert.equal(violations.length, 0, `FAULT_SEED=${SEED}: ${violations.length} violation(s)\n  ${violations.slice(0, 30).join('\n  ')}\nlast 50 steps:\n  ${timeline.slice(-50).join('\n  ')}`);
  } finally {
    if (process.env.FAULT_TRACE !== undefined) console.log(`fault run timeline:\n  ${timeline.join('\n  ')}`);
    if (failed) {
      const around = firstContext.length > 0 ? `\nthe 50 steps up to the first live entry deleted:\n  ${firstContext.join('\n  ')}` : '';
      console.log(`fault run FAILED: replay with FAULT_SEED=${SEED}${QUICK ? ' FAULT_QUICK=1' : ''}${around}\nlast 50 steps:\n  ${timeline.slice(-50).join('\n  ')}`);
    }
    server.clearFailures();
    if (stalled) server.stallWatches(false);
    await Promise.all(tasks);
    for (const n of nodes) await n.agent?.stop();
    await rig.stop();
  }
});
