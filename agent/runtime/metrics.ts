/**
 * The agent's Prometheus metrics, registered under the names in src/metric-names.ts on a
 * registry of its own (no global state: tests build as many agents as they like).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { AGENT_METRICS as N } from '../../src/metric-names.js';
import type { ConntrackIndexStats, ConntrackStats } from 'netlink-native/types';

export class AgentMetrics {
  readonly registry = new Registry();
  readonly drainsActive = new Gauge({ name: N.drainsActive, help: 'Drains (hook kind agent) running on this node', registers: [this.registry] });
  readonly drains = new Counter({ name: N.drains, help: 'Drains finished on this node, by how they ended (idle, timeout, pod-gone)', labelNames: ['ended'], registers: [this.registry] });
  readonly ipvsAvailable = new Gauge({ name: N.ipvsAvailable, help: '1 when this node has IPVS and the hold is on; 0 when conntrack-only', registers: [this.registry] });
  readonly ipvsServersHeld = new Gauge({ name: N.ipvsServersHeld, help: 'IPVS real servers of draining pods held at weight 0 on this node', registers: [this.registry] });
  readonly drainsInterrupted = new Counter({ name: N.drainsInterrupted, help: 'Drains whose held preStop call an agent crash cut short (found by the next agent instance; each also has a DrainInterrupted Event)', registers: [this.registry] });
  readonly ipvsRestores = new Counter({ name: N.ipvsRestores, help: 'Held servers restored after the service proxy changed them (action: weight = weight reset to 0, readd = re-added at its original weight then 0)', labelNames: ['action'], registers: [this.registry] });
  readonly conntrackDeleted = new Counter({ name: N.conntrackDeleted, help: 'Conntrack entries of gone pods deleted on this node, by protocol (tcp, udp, sctp, ipip, ipv6 = IPv6-in-IP)', labelNames: ['protocol'], registers: [this.registry] });
  readonly flushDuration = new Histogram({ name: N.conntrackFlushDuration, help: 'Duration of one ghost-cleanup conntrack pass', buckets: [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30], registers: [this.registry] });
  readonly flushFailures = new Counter({ name: N.conntrackFlushFailures, help: 'Ghost-cleanup passes that failed (retried with backoff)', registers: [this.registry] });
  readonly ipReuseSkips = new Counter({ name: N.ipReuseSkips, help: 'IPs of gone pods not flushed because a live pod holds them again', registers: [this.registry] });
  readonly conntrackEntries = new Gauge({ name: N.conntrackEntries, help: 'Entries in this node\'s conntrack table', registers: [this.registry] });
  readonly conntrackMax = new Gauge({ name: N.conntrackMax, help: 'nf_conntrack_max', registers: [this.registry] });
  readonly conntrackInsertFailed = new Counter({ name: N.conntrackInsertFailed, help: 'Conntrack insert_failed, summed over CPUs (kernel counter, followed by deltas)', registers: [this.registry] });
  readonly conntrackDrop = new Counter({ name: N.conntrackDrop, help: 'Conntrack drop, summed over CPUs', registers: [this.registry] });
  readonly conntrackEarlyDrop = new Counter({ name: N.conntrackEarlyDrop, help: 'Conntrack early_drop, summed over CPUs', registers: [this.registry] });
  readonly watchRestarts = new Counter({ name: N.watchRestarts, help: 'Pod watch restarts after an error (410 relists not included)', registers: [this.registry] });
  readonly eventOverruns = new Counter({ name: N.eventOverruns, help: 'Conntrack event socket overruns (ENOBUFS: events lost; the index is stale until a resync)', registers: [this.registry] });
  readonly indexResyncs = new Counter({ name: N.indexResyncs, help: 'Resynchronising dump passes of the conntrack event index', registers: [this.registry] });
  readonly indexFlows = new Gauge({ name: N.indexFlows, help: 'Flows of managed pods in the conntrack event index', registers: [this.registry] });
  readonly indexStale = new Gauge({ name: N.indexStale, help: '1 while the conntrack event index may have missed events (dump passes answer)', registers: [this.registry] });
  readonly indexFallbacks = new Counter({ name: N.indexFallbacks, help: 'Questions the event index could not answer (stale, address not watched yet, error), answered by a dump pass (use: flows, cleanup)', labelNames: ['use'], registers: [this.registry] });
  readonly indexVerifyLeftovers = new Counter({ name: N.indexVerifyLeftovers, help: 'Entries the verification dump pass deleted after a fresh index deletion (what the index missed; should stay 0)', registers: [this.registry] });
  readonly drainApiAnswers = new Counter({ name: N.drainApiAnswers, help: 'Drain API answers by HTTP status code (200 drain ended; 400/405/431 bad requests; 404 unknown id; 503 full or first pod list late; 500 handler failure)', labelNames: ['code'], registers: [this.registry] });
  readonly flowsVisible = new Gauge({ name: N.flowsVisible, help: '1 when netfilter conntrack sees this node\'s pod traffic; 0 when open flows are unknown (eBPF datapath, --flow-visibility): adaptive drains last their maximum', registers: [this.registry] });
  readonly podsCached = new Gauge({ name: N.podsCached, help: 'This node\'s managed pods in the watch cache', registers: [this.registry] });
  readonly eventsDropped = new Counter({ name: N.eventsDropped, help: 'Kubernetes Events not recorded (why: refused by the API, overflow of the retry queue)', labelNames: ['why'], registers: [this.registry] });
  readonly endpointsTracked = new Gauge({ name: N.endpointsTracked, help: 'Endpoints (pods, merged over their EndpointSlices) this agent reads: every Service kube-proxy serves, opted in or not', registers: [this.registry] });
  readonly endpointsDraining = new Gauge({ name: N.endpointsDraining, help: 'Endpoints terminating or not serving, held on this node', registers: [this.registry] });
  readonly endpointFlushes = new Counter({ name: N.endpointFlushes, help: 'Endpoints gone from every EndpointSlice whose conntrack entries this node flushed (scope: all protocols, or udp-sctp for an endpoint that left while serving)', labelNames: ['scope'], registers: [this.registry] });
  readonly endpointGoneChecks = new Counter({ name: N.endpointGoneChecks, help: 'GETs of a pod that left every EndpointSlice while serving, by outcome (gone: every protocol flushed; alive or error: UDP/SCTP only; over-budget: not asked, UDP/SCTP only)', labelNames: ['outcome'], registers: [this.registry] });
  readonly endpointsRead = new Counter({ name: N.endpointsRead, help: 'Endpoints read from EndpointSlice lists and events, by how: decoded, or kept (byte-identical to the copy of its slice the agent keeps, from a protobuf list or watch: not decoded)', labelNames: ['how'], registers: [this.registry] });
  readonly restartSweepDeleted = new Counter({ name: N.restartSweepDeleted, help: 'Entries DNATed to addresses no endpoint or local pod holds, deleted by the pass after start-up', registers: [this.registry] });
  readonly staleViewDeferrals = new Counter({ name: N.staleViewDeferrals, help: 'Decisions by time put off because the watch feeding them was not fresh (resync asked first)', labelNames: ['source'], registers: [this.registry] });

  private last: { insertFailed: number; drop: number; earlyDrop: number } | undefined;
  private lastIndex: { overruns: number; resyncs: number } | undefined;

  /** Follows the event index's counters (deltas) and gauges. */
  observeIndexStats(stats: ConntrackIndexStats): void {
    this.indexFlows.set(stats.flows);
    this.indexStale.set(stats.stale ? 1 : 0);
    const before = this.lastIndex ?? { overruns: 0, resyncs: 0 };
    if (stats.overruns > before.overruns) this.eventOverruns.inc(stats.overruns - before.overruns);
    if (stats.resyncs > before.resyncs) this.indexResyncs.inc(stats.resyncs - before.resyncs);
    this.lastIndex = { overruns: stats.overruns, resyncs: stats.resyncs };
  }

  constructor(options: { defaultMetrics?: boolean } = {}) {
    if (options.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry });
  }

  /** Follows the kernel's per-CPU counters: adds what grew since the last reading. */
  observeConntrackStats(stats: ConntrackStats): void {
    this.conntrackEntries.set(stats.count);
    this.conntrackMax.set(stats.max);
    const now = { insertFailed: 0, drop: 0, earlyDrop: 0 };
    for (const cpu of stats.perCpu) {
      now.insertFailed += cpu.insertFailed;
      now.drop += cpu.drop;
      now.earlyDrop += cpu.earlyDrop;
    }
    const before = this.last ?? { insertFailed: 0, drop: 0, earlyDrop: 0 };
    // A counter that went down (the table's namespace was recreated) counts from zero again.
    const delta = (n: number, b: number): number => (n >= b ? n - b : n);
    this.conntrackInsertFailed.inc(delta(now.insertFailed, before.insertFailed));
    this.conntrackDrop.inc(delta(now.drop, before.drop));
    this.conntrackEarlyDrop.inc(delta(now.earlyDrop, before.earlyDrop));
    this.last = now;
  }
}
