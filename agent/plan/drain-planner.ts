/**
 * The drain plan, run incrementally: the pods a watch event touched (and deleting pods whose
 * grace elapsed, from a deadline queue) are re-planned one by one with `planPod`, never the
 * whole cluster. Records are kept only for pods with something to resume (draining, gone and
 * not yet flushed, flushed while still in the API): a serving pod has none, so the state file
 * holds a handful of records, not 150,000.
 *
 * A serving pod's missing record is rebuilt from its previous view when it changes (it was
 * serving, so it had been Ready: `wasReady`), so the decision is planPod's for that pod
 * (src/drain-plan.ts declares it once).
 */
import { planPod, type PodRecord, type Transition } from '../../src/drain-plan.js';
import type { PodView } from '../../src/pod/view.js';
import { DeadlineQueue } from './deadline-queue.js';
import type { DrainingPod } from '../ipvs/ipvs-hold.js';
import type { PodCache } from '../pods/pod-cache.js';
import { Topic } from '../topic.js';

/** A planned state change of one pod (the drain runnable reacts: log, Events, sessions). */
export interface PlannedTransition {
  transition: Transition;
  record: PodRecord;
}

/** A gone pod whose IPs no live pod holds: flush this node's conntrack entries of them. */
export interface PlannedFlush {
  uid: string;
  key: string;
  ips: string[];
}

function serving(view: PodView): boolean {
  return view.ready && !view.deleting && !view.terminal;
}

/** The fields the plan reads: an update that changes none of them needs no re-plan. */
export function samePlanInput(a: PodView, b: PodView): boolean {
  return a.ready === b.ready && a.terminal === b.terminal && a.goneAtMs === b.goneAtMs && a.key === b.key
    && a.nodeName === b.nodeName && a.ips.length === b.ips.length && a.ips.every((ip, i) => ip === b.ips[i]);
}

export class DrainPlanner {
  private readonly records = new Map<string, PodRecord>();
  /** uid -> the pod's view before its first change since the last run (null: none known). */
  private readonly dirty = new Map<string, PodView | null>();
  private readonly deadlines = new DeadlineQueue();
  private readonly holding = new Map<string, DrainingPod>();
  /** The set of pods to hold (or their IPs) changed since `takeHoldingChanged()` was last called. */
  private holdingChanged = true;
  /** Pods planned since start (one per touched pod per run): tests and the bench read it. */
  plannedTotal = 0;

  /** Published as each pod is planned. */
  readonly transitions = new Topic<PlannedTransition>();
  /** Published for every flush the plan asks for (the conntrack runnable subscribes). */
  readonly flushes = new Topic<PlannedFlush>();

  constructor(private readonly cache: PodCache) {}

  /** Pods waiting to be re-planned. */
  get pending(): number {
    return this.dirty.size;
  }

  /**
   * When the earliest deleting pod's grace elapses (a re-plan is due then). A deadline whose pod
   * is no longer draining with that grace (DELETED came first, or it was updated) is dropped
   * here: a due deadline costs a resync of this node's pods, so a stale one must not.
   */
  get nextDeadline(): number | undefined {
    this.deadlines.dropStale((uid, atMs) => {
      const view = this.cache.view(uid);
      return this.records.get(uid)?.state !== 'draining' || view === undefined || (view.goneAtMs !== atMs && !view.terminal);
    });
    return this.deadlines.next;
  }

  /** The records to persist: only pods with something to resume. */
  snapshot(): PodRecord[] {
    return [...this.records.values()];
  }

  record(uid: string): PodRecord | undefined {
    return this.records.get(uid);
  }

  /** Records from the state file: draining pods stay held until the first sync re-plans them. */
  resume(records: readonly PodRecord[]): void {
    for (const rec of records) {
      this.records.set(rec.uid, rec);
      if (rec.state === 'draining' && rec.ips.length > 0) this.holding.set(rec.uid, { uid: rec.uid, key: rec.key, ips: rec.ips, wasReady: rec.wasReady });
    }
  }

  /** The pod changed (`prior`: its view before the change, undefined if it was not known). */
  touched(uid: string, prior: PodView | undefined): void {
    if (!this.dirty.has(uid)) this.dirty.set(uid, prior ?? null);
  }

  /** The first complete list: every pod known and every record is planned once. */
  touchAll(uids: Iterable<string>): void {
    for (const uid of uids) this.touched(uid, undefined);
    for (const uid of this.records.keys()) this.touched(uid, undefined);
  }

  /** Deleting pods whose grace elapsed by `nowMs` are re-planned. */
  touchDue(nowMs: number): void {
    for (const uid of this.deadlines.popDue(nowMs)) this.touched(uid, undefined);
  }

  /**
   * Re-plans the touched pods; returns whether any record changed (the state file is then
   * rewritten). `freshAtMs`: the view is known complete up to then (a consistent list asked
   * then). A grace that ran out after it is not decided yet: the pod stays draining (held) and
   * its deadline asks for a resync first. A list from the watch cache (the first one after a
   * restart) may lack the pod that took a gone pod's IP, and the flush would cut that pod's
   * connections.
   */
  plan(nowMs: number, freshAtMs = nowMs): boolean {
    let changed = false;
    const liveHolder = (ip: string, exceptUid: string): string | undefined => this.cache.liveHolder(ip, nowMs, exceptUid)?.view.key;
    const batch = [...this.dirty];
    this.dirty.clear();
    this.plannedTotal += batch.length;
    for (const [uid, prior] of batch) {
      const pod = this.cache.view(uid);
      const judged = this.judged(pod, nowMs, freshAtMs);
      const before = this.records.get(uid);
      const previous = before ?? (prior !== null && serving(prior)
        ? { uid, key: prior.key, nodeName: prior.nodeName, ips: prior.ips, state: 'serving' as const, sinceMs: nowMs, wasReady: true, reason: 'ready' as const }
        : undefined);
      const result = planPod({ pod: judged, previous, nowMs, liveHolder });
      const rec = result.record;
      if (rec !== undefined && result.keep) {
        this.records.set(uid, rec);
        if (before === undefined || before.state !== rec.state || before.ips !== rec.ips || before.nodeName !== rec.nodeName) changed = true;
      } else if (before !== undefined) {
        this.records.delete(uid);
        changed = true;
      }
      const held = this.holding.get(uid);
      if (rec?.state === 'draining' && rec.ips.length > 0) {
        if (held === undefined || held.ips.join() !== rec.ips.join() || held.wasReady !== rec.wasReady) {
          this.holding.set(uid, { uid, key: rec.key, ips: rec.ips, wasReady: rec.wasReady });
          this.holdingChanged = true;
        }
      } else if (held !== undefined) {
        this.holding.delete(uid);
        this.holdingChanged = true;
      }
      if (pod?.goneAtMs !== undefined && rec?.state === 'draining') this.deadlines.push(pod.goneAtMs, uid);
      else if (pod?.terminal === true && rec?.state === 'draining') this.deadlines.push(nowMs, uid);
      if (result.transition !== undefined && rec !== undefined) this.transitions.publish({ transition: result.transition, record: rec });
      for (const action of result.actions) if (action.kind === 'flush') this.flushes.publish({ uid, key: action.key, ips: rec?.ips ?? action.ips });
    }
    return changed;
  }

  /**
   * The pod as a decision may see it: a grace that ran out after `freshAtMs`, or a terminal
   * phase before any consistent read (the first list after a start comes from the watch cache),
   * is not acted on yet; the pod is judged as still deleting until a fresh view confirms it.
   */
  private judged(pod: PodView | undefined, nowMs: number, freshAtMs: number): PodView | undefined {
    if (pod === undefined) return pod;
    if (pod.terminal && freshAtMs === Number.NEGATIVE_INFINITY) return { ...pod, terminal: false, deleting: true, goneAtMs: undefined };
    if (pod.goneAtMs !== undefined && pod.goneAtMs <= nowMs && pod.goneAtMs > freshAtMs) return { ...pod, goneAtMs: undefined };
    return pod;
  }

  /** The ghost cleanup flushed this pod: `gone -> flushed` (forgotten once the API no longer has it). */
  markFlushed(uid: string, nowMs: number): boolean {
    const rec = this.records.get(uid);
    if (rec === undefined || rec.state !== 'gone') return false;
    if (this.cache.has(uid)) this.records.set(uid, { ...rec, state: 'flushed', sinceMs: nowMs, reason: 'flushed' });
    else this.records.delete(uid);
    return true;
  }

  /** Whether the pods to hold changed since the last call (a hold pass is then due at once). */
  takeHoldingChanged(): boolean {
    const changed = this.holdingChanged;
    this.holdingChanged = false;
    return changed;
  }

  /** Pods to hold at weight 0 on this node. */
  draining(): DrainingPod[] {
    return [...this.holding.values()];
  }

  /** A pod the API shows serving (known, planned, no record): a released hold restores its weights. */
  isServing(uid: string): boolean {
    return this.cache.has(uid) && !this.records.has(uid) && !this.dirty.has(uid);
  }
}
