/**
 * Flow pinning on one node: every hold interval, plans the twins from the held servers and the
 * node's IPVS (src/flowpin/twin-plan.ts), programs conndrain's nftables table in one
 * transaction (nft JSON), then creates/updates/retires/deletes the twin services through
 * netlink-native. Self-contained: `start()` / `stop()`, the held servers come from a callback
 * (the IPVS hold's list), so the agent wires it with one call.
 *
 * Order inside a pass: nftables first (the registry names a twin before it exists, so a crash
 * never leaves an unnamed twin; a pin rule whose twin is not there yet only falls back to the
 * original service: a fwmark miss in ip_vs_service_find goes on to the VIP:port table), then
 * the twins, then deletions, after which a second pass drops them from the registry (and, with
 * no twin left, the whole table).
 */
import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { IpvsApi, IpvsDestination } from 'netlink-native/types';
import { formatServiceKey } from 'netlink-native/ipvs-keys';
import { formatMark, inRange, type FwmarkRange } from '../../../src/flowpin/fwmark-range.js';
import { buildRuleset, parsePinCounters, parseRegistry } from '../../../src/flowpin/nft-ruleset.js';
import { planFlowpin, type FlowpinPlan, type RegistryEntry, type TwinState } from '../../../src/flowpin/twin-plan.js';
import type { HeldRef, ServiceSnapshot } from '../../../src/flowpin/types.js';
import { AGENT_METRICS as N } from '../../../src/metric-names.js';
import { systemClock, type Clock, type TimerHandle } from '../../../time/clock.js';
import { applyTwin } from './apply-twin.js';
import { isCode } from '../netlink-code.js';
import type { NftApi } from './nft.js';

export const SLOPPY_TCP_PATH = '/proc/sys/net/ipv4/vs/sloppy_tcp';

export interface FlowpinControllerOptions {
  ipvs: IpvsApi;
  nft: NftApi;
  range: FwmarkRange;
  logger: Logger;
  /** The servers the IPVS hold keeps at weight 0 now. */
  held: () => readonly HeldRef[];
  /** Pods whose owners turned flow pinning off. */
  optOutPodUids?: () => ReadonlySet<string>;
  clock?: Clock;
  intervalMs?: number;
  /** net.ipv4.vs.sloppy_tcp of this node (undefined when unreadable). */
  readSloppyTcp?: () => Promise<number | undefined>;
  /** Registers the flowpin metrics there when given. */
  registry?: Registry;
}

export interface FlowpinReport {
  plan: FlowpinPlan;
  nftApplied: boolean;
  deleted: number;
  errors: number;
}

export async function readSloppyTcp(path = SLOPPY_TCP_PATH): Promise<number | undefined> {
  try {
    const value = Number.parseInt((await readFile(path, 'utf8')).trim(), 10);
    return Number.isNaN(value) ? undefined : value;
  } catch {
    return undefined;
  }
}

function sameRegistry(listing: unknown, plan: FlowpinPlan): boolean {
  if (listing === undefined) return plan.twins.length === 0;
  const have = parseRegistry(listing).map((e) => `${e.fwmark}>${formatServiceKey(e.original)}`).sort();
  const want = plan.twins.map((t) => `${t.fwmark}>${formatServiceKey(t.original)}`).sort();
  const pins = [...parsePinCounters(listing).keys()].sort((a, b) => a - b);
  const wantPins = plan.twins.filter((t) => t.state === 'active').map((t) => t.fwmark).sort((a, b) => a - b);
  return have.join(',') === want.join(',') && pins.join(',') === wantPins.join(',');
}

class FlowpinMetrics {
  readonly twins: Gauge;
  readonly pinnedPackets: Gauge;
  readonly sloppyTcp: Gauge;
  readonly errors: Counter;

  constructor(registry: Registry | undefined) {
    const registers = registry === undefined ? [] : [registry];
    this.twins = new Gauge({ name: N.flowpinTwins, help: 'Twin IPVS services of flow pinning on this node, by state (active, retiring)', labelNames: ['state'], registers });
    this.pinnedPackets = new Gauge({ name: N.flowpinPinnedPackets, help: 'Non-SYN TCP packets conndrain\'s nftables rules sent to a twin, by twin mark (since the table was last replaced)', labelNames: ['fwmark'], registers });
    this.sloppyTcp = new Gauge({ name: N.ipvsSloppyTcp, help: 'net.ipv4.vs.sloppy_tcp on this node (0: a mid-flow packet can never be scheduled, flow pinning cannot help)', registers });
    this.errors = new Counter({ name: N.flowpinErrors, help: 'Flow pinning passes or steps that failed (retried next interval)', labelNames: ['step'], registers });
  }
}

/** A pass that did nothing. */
function idleReport(): FlowpinReport {
  return { plan: { twins: [], skipped: [], exhausted: [], foreign: [] }, nftApplied: false, deleted: 0, errors: 0 };
}

export class FlowpinController {
  private readonly clock: Clock;
  private readonly metrics: FlowpinMetrics;
  private timer: TimerHandle | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  /** The pass queued behind the one running, not begun yet: later sync() calls share it. */
  private waiting: Promise<FlowpinReport> | undefined;
  private sloppyWarned = false;
  private foreignWarned = new Set<number>();
  private stopped = false;
  /** The last pass found nothing held and no table: passes with nothing held skip nft and IPVS. */
  private idle = false;

  constructor(private readonly options: FlowpinControllerOptions) {
    this.clock = options.clock ?? systemClock;
    this.metrics = new FlowpinMetrics(options.registry);
  }

  /** Re-asserts every interval (default 1 s) until stop(). */
  start(): void {
    if (this.timer !== undefined) return;
    this.stopped = false;
    this.timer = this.clock.setInterval(() => void this.sync().catch(() => undefined), this.options.intervalMs ?? 1000);
    void this.sync().catch(() => undefined);
  }

  /** Stops re-asserting; twins and rules stay (pinned flows keep working across an agent restart). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
    await this.queue.catch(() => undefined);
  }

  /**
   * One pass (plus a follow-up pass when it deleted twins). Passes never overlap. Calls while a
   * pass waits to begin share that pass, so at most one waits behind the one running however
   * slow nft is (every hold pass asks for one, and so does the interval); a pass that would
   * begin after stop() does nothing, so stop() waits for the pass in flight only.
   */
  sync(): Promise<FlowpinReport> {
    if (this.waiting !== undefined) return this.waiting;
    const run = this.queue.then(async () => {
      this.waiting = undefined;
      if (this.stopped) return idleReport();
      const first = await this.pass();
      if (first.deleted > 0 && !this.stopped) {
        const second = await this.pass();
        return { ...second, deleted: first.deleted + second.deleted };
      }
      return first;
    });
    this.waiting = run;
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async snapshot(registry: readonly RegistryEntry[], held: readonly HeldRef[]): Promise<ServiceSnapshot[]> {
    const { ipvs, range } = this.options;
    const services = await ipvs.listServices();
    const needed = new Set<string>([...held.map((h) => formatServiceKey(h.service)), ...registry.map((e) => formatServiceKey(e.original))]);
    const out: ServiceSnapshot[] = [];
    for (const service of services) {
      const id = formatServiceKey(service.key);
      const twin = service.key.fwmark !== undefined && inRange(range, service.key.fwmark);
      let destinations: IpvsDestination[] = [];
      if (twin || needed.has(id)) {
        try {
          destinations = await ipvs.listDestinations(service.key);
        } catch (error) {
          if (!isCode(error, 'ESRCH', 'ENOENT')) throw error;
          continue; // deleted meanwhile
        }
      }
      out.push({ service, destinations });
    }
    return out;
  }

  private async pass(): Promise<FlowpinReport> {
    const { ipvs, nft, range, logger } = this.options;
    const held = this.options.held();
    if (held.length === 0 && this.idle) return { plan: { twins: [], skipped: [], exhausted: [], foreign: [] }, nftApplied: false, deleted: 0, errors: 0 };
    this.idle = false;
    let listing: unknown;
    try {
      listing = await nft.listTable();
    } catch (error) {
      this.metrics.errors.inc({ step: 'nft-list' });
      logger.warn({ err: error }, 'flowpin: cannot read conndrain\'s nftables table; retried next interval');
      throw error;
    }
    const registry = parseRegistry(listing);
    if (held.length === 0 && registry.length === 0 && listing === undefined) {
      this.idle = true;
      this.metrics.twins.reset();
      return { plan: { twins: [], skipped: [], exhausted: [], foreign: [] }, nftApplied: false, deleted: 0, errors: 0 };
    }
    const services = await this.snapshot(registry, held);
    const plan = planFlowpin({ range, services, held, registry, optOutPodUids: this.options.optOutPodUids?.() });
    this.report(plan);

    let nftApplied = false;
    if (!sameRegistry(listing, plan)) {
      try {
        await nft.apply(buildRuleset(plan.twins));
        nftApplied = true;
        logger.info({ active: plan.twins.filter((t) => t.state === 'active').map((t) => `${t.id}->${formatMark(t.fwmark)}`), registered: plan.twins.length }, plan.twins.length === 0 ? 'flowpin: no twin left; conndrain\'s nftables table removed' : 'flowpin: nftables table replaced');
      } catch (error) {
        this.metrics.errors.inc({ step: 'nft-apply' });
        logger.error({ err: error }, 'flowpin: nftables transaction refused; IPVS twins not changed, retried next interval');
        throw error;
      }
    } else if (listing !== undefined) {
      for (const [mark, packets] of parsePinCounters(listing)) this.metrics.pinnedPackets.set({ fwmark: formatMark(mark) }, packets);
    }

    const present = new Set(services.filter((s) => s.service.key.fwmark !== undefined).map((s) => s.service.key.fwmark));
    let deleted = 0;
    let errors = 0;
    for (const twin of plan.twins) {
      const log = logger.child({ twin: twin.id, fwmark: formatMark(twin.fwmark), pods: twin.pods });
      try {
        if (twin.state === 'delete') {
          try {
            await ipvs.deleteService(twin.spec.key);
          } catch (error) {
            if (!isCode(error, 'ESRCH', 'ENOENT')) throw error;
          }
          deleted++;
          log.info('flowpin: twin carries no connection any more; deleted');
          continue;
        }
        const change = await applyTwin(ipvs, twin, present.has(twin.fwmark), log);
        if (change.created) log.info({ scheduler: twin.spec.scheduler, flags: twin.spec.flags, servers: twin.destinations.map((d) => `${d.spec.address}:${d.spec.port}@${d.weight}`) }, 'flowpin: twin created; mid-flow packets of the held service now reach the pods the pre-drain table chose');
        else if (change.added + change.removed + change.reweighted > 0) log.info({ ...change, state: twin.state }, 'flowpin: twin updated');
      } catch (error) {
        errors++;
        this.metrics.errors.inc({ step: 'ipvs' });
        log.warn({ err: error, state: twin.state }, 'flowpin: could not apply the twin; retried next interval');
      }
    }
    return { plan, nftApplied, deleted, errors };
  }

  private report(plan: FlowpinPlan): void {
    const { logger } = this.options;
    const count = (state: TwinState): number => plan.twins.filter((t) => t.state === state).length;
    this.metrics.twins.set({ state: 'active' }, count('active'));
    this.metrics.twins.set({ state: 'retiring' }, count('retiring'));
    for (const mark of plan.foreign) {
      if (this.foreignWarned.has(mark)) continue;
      this.foreignWarned.add(mark);
      logger.warn({ fwmark: formatMark(mark), range: this.options.range.text }, 'flowpin: an IPVS fwmark service conndrain did not create uses a mark in conndrain\'s range; that mark is skipped (choose another --fwmark-range)');
    }
    if (plan.exhausted.length > 0) logger.error({ services: plan.exhausted, range: this.options.range.text }, 'flowpin: no free mark left in the range for these services; their flows are not pinned');
    if (count('active') > 0) void this.checkSloppy();
  }

  private async checkSloppy(): Promise<void> {
    const value = await (this.options.readSloppyTcp ?? readSloppyTcp)();
    if (value === undefined) return;
    this.metrics.sloppyTcp.set(value);
    if (value === 0 && !this.sloppyWarned) {
      this.sloppyWarned = true;
      this.options.logger.warn({ sysctl: 'net.ipv4.vs.sloppy_tcp', value }, 'flowpin: sloppy_tcp=0: IPVS schedules no packet without SYN (ip_vs_proto_tcp.c tcp_conn_schedule), so a flow that moves to this node cannot be pinned; set net.ipv4.vs.sloppy_tcp=1 (kube-router does for DSR + Maglev)');
    } else if (value !== 0) {
      this.sloppyWarned = false;
    }
  }
}
