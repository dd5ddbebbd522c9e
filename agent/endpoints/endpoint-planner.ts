/**
 * The drain state of the cluster's endpoints, from their EndpointSlices (KEP-1672), the same
 * on every node:
 *
 *   serving  -> draining  some slice lists it terminating or not serving (never `!ready`:
 *                         publishNotReadyAddresses makes a terminating endpoint ready)
 *   draining -> serving   every slice lists it serving again, not terminating
 *   *        -> leaving   it left every slice; `debounceMs` later, still absent: gone
 *   draining -> gone      terminating for longer than `terminatingMaxMs` (the longest drain the
 *                         webhook allows): its node is dead
 *
 * Only endpoints that are not serving have a record (a handful), so memory and the state file
 * do not grow with the cluster. A gone endpoint is flushed on this node: every protocol when it
 * was draining, only UDP and SCTP when it left while serving (its Service was deleted or a
 * label changed: no proof the pod died; kube-proxy does the same). Pods of this node are left to
 * the pod watch, which knows whether they died. Decisions by time are taken by the caller only
 * on a fresh view (`takeDue`).
 */
import type { PodRecord } from '../../src/drain-plan.js';
import { hasTarget, type EndpointTarget, type MergedEndpoint } from '../../src/endpoints/endpoint-index.js';
import type { DrainingPod } from '../ipvs/ipvs-hold.js';
import { DeadlineQueue } from '../plan/deadline-queue.js';

export type FlushScope = 'all' | 'udp-sctp';

/** The protocols of a target whose port is not known (port 0: any port). */
const ANY_PORT = ['tcp', 'udp', 'sctp'] as const;

/** A gone endpoint whose entries this node deletes (by its targets; addresses a live pod holds are skipped then). */
export interface EndpointFlush {
  uid: string;
  key: string;
  /** The endpoint's node (undefined when its slice names none). */
  nodeName: string | undefined;
  targets: EndpointTarget[];
  scope: FlushScope;
  why: 'left-after-draining' | 'left-while-serving' | 'terminating-too-long';
}

/** Replaced, never edited, on a change (the hold built of it is kept per record). */
interface EndpointRecord {
  readonly state: 'draining' | 'leaving' | 'gone';
  readonly uid: string;
  readonly key: string;
  readonly nodeName: string | undefined;
  readonly addresses: string[];
  readonly targets: EndpointTarget[];
  readonly sinceMs: number;
  readonly terminatingSinceMs?: number;
  readonly leftAtMs?: number;
  readonly wasDraining?: boolean;
  /** Resumed from the state file: held as it was until the first slice list decides. */
  readonly resumed?: boolean;
  /** Never seen serving (a new pod of a rollout, not Ready yet): the proxy programs no server for it, so no scan is due for it at once. */
  readonly neverServed?: boolean;
}

export interface EndpointPlannerOptions {
  debounceMs: number;
  terminatingMaxMs: number;
  /**
   * A pod of this node the pod watch knows (or knew a moment ago): its flush is the pod watch's.
   * `nodeName` is the node its slices name (undefined when they name none): asked for every
   * draining endpoint on every plan run, so an endpoint of another node is answered without
   * looking into the pod cache.
   */
  isLocalPod: (uid: string, nodeName: string | undefined) => boolean;
}

export class EndpointPlanner {
  private readonly records = new Map<string, EndpointRecord>();
  private readonly deadlines = new DeadlineQueue();
  private holdingChanged = true;
  /** Each draining record's hold, built once: records are replaced, never edited, on a change. */
  private readonly holdOf = new WeakMap<EndpointRecord, DrainingPod>();
  private drainingCount = 0;

  constructor(private readonly options: EndpointPlannerOptions) {}

  /** How many records are draining (kept as records change: read after every slice event). */
  get draining(): number {
    return this.drainingCount;
  }

  private put(uid: string, rec: EndpointRecord): void {
    this.drop(uid);
    this.records.set(uid, rec);
    if (rec.state === 'draining') this.drainingCount += 1;
  }

  private drop(uid: string): void {
    if (this.records.get(uid)?.state === 'draining') this.drainingCount -= 1;
    this.records.delete(uid);
  }

  /** Whether `uid` has a record (draining, leaving or gone). */
  has(uid: string): boolean {
    return this.records.has(uid);
  }

  /** When the next decision by time is due. */
  get nextDeadline(): number | undefined {
    return this.deadlines.next;
  }

  /**
   * One endpoint changed: `before`/`after` are its merged views over the opted-in slices
   * (undefined: listed in none). `optedOut`: it left because its namespace or Service opted out,
   * not because it went: forgotten, never flushed.
   */
  changed(uid: string, before: MergedEndpoint | undefined, after: MergedEndpoint | undefined, nowMs: number, optedOut = false): void {
    const rec = this.records.get(uid);
    if (after === undefined) {
      if (optedOut) {
        if (rec !== undefined) this.forget(uid, rec);
        return;
      }
      const last = before ?? (rec?.state === 'draining' ? rec : undefined);
      if (last === undefined || rec?.state === 'leaving' || rec?.state === 'gone') {
        if (rec?.state === 'gone') this.forget(uid, rec);
        return;
      }
      const wasDraining = (before?.draining ?? false) || rec?.state === 'draining';
      // A draining pod leaves its Services' slices one write at a time: flush what it served in any of them.
      const targets = rec?.state === 'draining' ? unionTargets(rec.targets, last.targets) : [...last.targets];
      this.put(uid, { state: 'leaving', uid, key: last.key, nodeName: last.nodeName, addresses: [...new Set([...(rec?.addresses ?? []), ...last.addresses])], targets, sinceMs: nowMs, leftAtMs: nowMs, wasDraining });
      if (rec?.state === 'draining') this.holdingChanged = true;
      this.deadlines.push(nowMs + this.options.debounceMs, uid);
      return;
    }
    if (rec?.state === 'gone') return; // its node is dead: not held again while the slice still lists it
    if (!after.draining) {
      if (rec !== undefined) this.forget(uid, rec);
      return;
    }
    const terminatingSinceMs = after.terminating ? (rec?.terminatingSinceMs ?? nowMs) : undefined;
    const next: EndpointRecord = {
      state: 'draining', uid, key: after.key, nodeName: after.nodeName, addresses: after.addresses,
      // What it served before it started draining counts too (its slices drop it one by one).
      targets: rec?.state === 'draining' && rec.resumed !== true ? unionTargets(rec.targets, after.targets) : unionTargets(before?.targets ?? [], after.targets),
      sinceMs: rec?.state === 'draining' ? rec.sinceMs : nowMs,
      ...(terminatingSinceMs === undefined ? {} : { terminatingSinceMs }),
      ...((rec?.state === 'draining' ? rec.neverServed === true : before === undefined || before.draining) ? { neverServed: true } : {}),
    };
    if (rec?.state !== 'draining' || rec.resumed === true || rec.targets.length !== next.targets.length || rec.targets.some((t, i) => t.address !== next.targets[i]?.address || t.port !== next.targets[i]?.port)) this.holdingChanged = true;
    this.put(uid, next);
    if (terminatingSinceMs !== undefined && rec?.terminatingSinceMs === undefined) this.deadlines.push(terminatingSinceMs + this.options.terminatingMaxMs, uid);
  }

  /**
   * The decisions by time due at `nowMs`, taken on a view the caller made sure is fresh: gone
   * endpoints to flush (this node's pods excepted).
   */
  takeDue(nowMs: number): EndpointFlush[] {
    const out: EndpointFlush[] = [];
    for (const uid of this.deadlines.popDue(nowMs)) {
      const rec = this.records.get(uid);
      if (rec === undefined) continue;
      if (rec.state === 'leaving' && rec.leftAtMs !== undefined && nowMs >= rec.leftAtMs + this.options.debounceMs) {
        this.drop(uid);
        if (!this.options.isLocalPod(uid, rec.nodeName)) {
          out.push({ uid, key: rec.key, nodeName: rec.nodeName, targets: rec.targets, scope: rec.wasDraining === true ? 'all' : 'udp-sctp', why: rec.wasDraining === true ? 'left-after-draining' : 'left-while-serving' });
        }
      } else if (rec.state === 'draining' && rec.terminatingSinceMs !== undefined && nowMs >= rec.terminatingSinceMs + this.options.terminatingMaxMs) {
        this.put(uid, { ...rec, state: 'gone', sinceMs: nowMs });
        this.holdingChanged = true;
        if (!this.options.isLocalPod(uid, rec.nodeName)) out.push({ uid, key: rec.key, nodeName: rec.nodeName, targets: rec.targets, scope: 'all', why: 'terminating-too-long' });
      }
    }
    return out;
  }

  /** Whether a decision by time is due at `nowMs`. */
  isDue(nowMs: number): boolean {
    const next = this.deadlines.next;
    return next !== undefined && next <= nowMs;
  }

  /** Endpoints to hold at weight 0 on this node, by their slices' targets. */
  drainingPods(): DrainingPod[] {
    const out: DrainingPod[] = [];
    for (const r of this.records.values()) {
      // This node's pods are the pod watch's: it holds them by IP while they drain and knows when they are gone.
      if (r.state !== 'draining' || this.options.isLocalPod(r.uid, r.nodeName)) continue;
      out.push(this.drainingPodOf(r));
    }
    return out;
  }

  private drainingPodOf(r: EndpointRecord): DrainingPod {
    let pod = this.holdOf.get(r);
    if (pod === undefined) {
      pod = { uid: r.uid, key: r.key, ips: r.addresses, ports: r.resumed === true ? [] : dedupePorts(r.targets), wasReady: r.neverServed !== true, elsewhere: true };
      this.holdOf.set(r, pod);
    }
    return pod;
  }

  /** Whether the endpoints to hold changed since the last call. */
  takeHoldingChanged(): boolean {
    const changed = this.holdingChanged;
    this.holdingChanged = false;
    return changed;
  }

  /** Known and not draining (its hold, if any, is released as Ready again). */
  isServing(uid: string, listed: boolean): boolean {
    return listed && !this.records.has(uid);
  }

  /** Records of draining endpoints for the state file (the pod-record shape it keeps). */
  snapshot(): PodRecord[] {
    const out: PodRecord[] = [];
    for (const r of this.records.values()) {
      if (r.state !== 'draining' || this.options.isLocalPod(r.uid, r.nodeName)) continue;
      out.push({ uid: r.uid, key: r.key, nodeName: r.nodeName, ips: r.addresses, state: 'draining', sinceMs: r.sinceMs, wasReady: true, reason: r.terminatingSinceMs === undefined ? 'not-ready' : 'deleting' });
    }
    return out;
  }

  /** Draining records from the state file (other nodes' pods): held as they were until the first slice list. */
  resume(records: readonly PodRecord[]): void {
    for (const rec of records) {
      if (rec.state !== 'draining' || this.records.has(rec.uid)) continue;
      this.put(rec.uid, { state: 'draining', uid: rec.uid, key: rec.key, nodeName: rec.nodeName, addresses: rec.ips, targets: [], sinceMs: rec.sinceMs, resumed: true });
    }
    this.holdingChanged = true;
  }

  /**
   * The first slice list is in. A resumed record that no slice lists any more drained and went
   * while no agent ran: it is flushed (every protocol, any port: the state file kept its
   * addresses, not its ports), after the debounce like any endpoint that left. One listed but no
   * longer draining is dropped (its hold released).
   */
  settleResumed(stillDraining: (uid: string) => boolean, listed: (uid: string) => boolean, nowMs: number): void {
    for (const [uid, rec] of [...this.records]) {
      if (rec.resumed !== true) continue;
      if (!listed(uid)) {
        const targets = rec.addresses.flatMap((address) => ANY_PORT.map((protocol) => ({ address, port: 0, protocol })));
        this.put(uid, { state: 'leaving', uid, key: rec.key, nodeName: rec.nodeName, addresses: rec.addresses, targets, sinceMs: nowMs, leftAtMs: nowMs, wasDraining: true });
        this.deadlines.push(nowMs + this.options.debounceMs, uid);
        this.holdingChanged = true;
      } else if (!stillDraining(uid)) {
        this.drop(uid);
        this.holdingChanged = true;
      }
    }
  }

  private forget(uid: string, rec: EndpointRecord): void {
    this.drop(uid);
    if (rec.state === 'draining') this.holdingChanged = true;
  }
}

/*
 * A pod has a few targets (its addresses times its Services' ports): a scan of them beats a set
 * of key strings, and these run on every watch event that changes a draining endpoint.
 */

/** The targets of `a` then `b`, each distinct one once (protocol, address, port), first kept, in order. */
function unionTargets(a: readonly EndpointTarget[], b: readonly EndpointTarget[]): EndpointTarget[] {
  const out: EndpointTarget[] = [];
  for (const t of a) if (!hasTarget(out, t.address, t.port, t.protocol)) out.push(t);
  for (const t of b) if (!hasTarget(out, t.address, t.port, t.protocol)) out.push(t);
  return out;
}

/** The distinct (port, protocol) pairs of `targets`, first kept, in order. */
function dedupePorts(targets: readonly EndpointTarget[]): Array<{ port: number; protocol: string }> {
  const out: Array<{ port: number; protocol: string }> = [];
  for (const t of targets) if (!out.some((o) => o.port === t.port && o.protocol === t.protocol)) out.push({ port: t.port, protocol: t.protocol });
  return out;
}
