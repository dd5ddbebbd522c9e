/**
 * The drain plan: a pure function of (a pod the API shows, what the agent knew of it before,
 * now, which live pods hold which IPs) giving the pod's drain state and what the agent must
 * do about it (`planPod`). The states are the contract's (docs/design/contract.md), the same
 * on every node:
 *
 *   serving  -> draining  (Ready false, or deletionTimestamp set)
 *   draining -> serving   (Ready again, not deleting: the agent stops interfering)
 *   *        -> gone      (deleted from the API, terminal phase, or deletionTimestamp + grace elapsed)
 *   gone     -> flushed   (the node's conntrack entries of its IPs were deleted: `markFlushed`)
 *
 * Actions are desired state where repeating them is harmless (`hold` for every draining pod,
 * `flush` for every gone pod, on every run, so a restart picks them up again) and transitions
 * where it is not (`release`). An IP that a live pod (any pod in the API that is not gone)
 * holds is never flushed: it is reported as a reuse skip instead.
 */
import type { DrainState } from './contract.js';
import type { PodView } from './pod/view.js';

/** What the agent remembers of a pod between runs (and across restarts, in the state file). */
export interface PodRecord {
  uid: string;
  key: string;
  nodeName: string | undefined;
  ips: string[];
  state: DrainState;
  /** When the pod entered `state`. */
  sinceMs: number;
  /** Whether the pod was ever seen Ready (a pod that never served did not start a drain). */
  wasReady: boolean;
  /** Why it is draining or gone, for logs and events. */
  reason: TransitionReason;
}

export type TransitionReason =
  | 'ready'
  | 'not-ready'
  | 'deleting'
  | 'deleted'
  | 'grace-elapsed'
  | 'terminal'
  | 'flushed';

export interface Transition {
  uid: string;
  key: string;
  from: DrainState | 'new';
  to: DrainState;
  reason: TransitionReason;
  /** The pod had been Ready before this transition. */
  wasReady: boolean;
  nodeName: string | undefined;
}

export type PlanAction =
  /** Keep every IPVS real server of these IPs present at weight 0. */
  | { kind: 'hold'; uid: string; key: string; ips: string[] }
  /** Stop holding: `serving` restores what we changed, `gone` removes only what we re-created. */
  | { kind: 'release'; uid: string; key: string; ips: string[]; why: 'serving' | 'gone' }
  /** Delete this node's conntrack entries of these IPs (none of them held by a live pod). */
  | { kind: 'flush'; uid: string; key: string; ips: string[] }
  /** An IP of a gone pod that a live pod holds again: never flushed. */
  | { kind: 'skip-reused'; uid: string; key: string; ip: string; holder: string };

interface Observed {
  state: DrainState;
  reason: TransitionReason;
}

function observe(pod: PodView, nowMs: number): Observed {
  if (pod.terminal) return { state: 'gone', reason: 'terminal' };
  if (pod.goneAtMs !== undefined && nowMs >= pod.goneAtMs) return { state: 'gone', reason: 'grace-elapsed' };
  if (pod.deleting) return { state: 'draining', reason: 'deleting' };
  if (!pod.ready) return { state: 'draining', reason: 'not-ready' };
  return { state: 'serving', reason: 'ready' };
}

/** The next state from the previous one and what the API shows; gone and flushed never come back. */
function nextState(previous: PodRecord | undefined, seen: Observed): Observed {
  if (previous === undefined) return seen;
  if (previous.state === 'flushed') return { state: 'flushed', reason: previous.reason };
  if (previous.state === 'gone') return { state: 'gone', reason: previous.reason };
  return seen;
}

/** The ghost cleanup finished for this pod: `gone -> flushed`. Unknown or not-gone pods are left as they are. */
export function markFlushed(records: ReadonlyMap<string, PodRecord>, uid: string, nowMs: number): Map<string, PodRecord> {
  const out = new Map(records);
  const rec = out.get(uid);
  if (rec !== undefined && rec.state === 'gone') out.set(uid, { ...rec, state: 'flushed', sinceMs: nowMs, reason: 'flushed' });
  return out;
}

/** One pod's plan (`planPod`): work proportional to what changed, not to the cluster. */
export interface PodPlanInput {
  /** The pod as the (synced) watch cache holds it; undefined when the API no longer has it. */
  pod: PodView | undefined;
  /**
   * What the agent knew: its record, or, for a pod it keeps no record of (serving pods are not
   * recorded), `{ state: 'serving', wasReady: true }` when the pod's previous view was serving.
   */
  previous: PodRecord | undefined;
  nowMs: number;
  /** A live pod (not gone) other than `exceptUid` that holds `ip`: its key. Such an IP is never flushed. */
  liveHolder: (ip: string, exceptUid: string) => string | undefined;
}

export interface PodPlan {
  /** The pod's record after this run; undefined when there is nothing left to know (absent and done). */
  record: PodRecord | undefined;
  /** Whether the record must be kept: false for serving pods (nothing to resume) and forgotten ones. */
  keep: boolean;
  transition: Transition | undefined;
  actions: PlanAction[];
}

/**
 * The drain decision, declared once: one pod's plan from that pod and its previous record.
 * The agent re-plans the pods a watch event touched (and deleting pods when their grace
 * elapses) instead of every pod of the cluster.
 */
export function planPod(input: PodPlanInput): PodPlan {
  const { pod, previous, nowMs, liveHolder } = input;
  let rec: PodRecord;
  if (pod === undefined) {
    if (previous === undefined || previous.state === 'flushed') return { record: undefined, keep: false, transition: undefined, actions: [] };
    rec = previous.state === 'gone' ? previous : { ...previous, state: 'gone', sinceMs: nowMs, reason: 'deleted' };
  } else {
    const next = nextState(previous, observe(pod, nowMs));
    const changed = previous === undefined || previous.state !== next.state;
    rec = {
      uid: pod.uid,
      key: pod.key,
      nodeName: pod.nodeName ?? previous?.nodeName,
      ips: pod.ips.length > 0 ? pod.ips : (previous?.ips ?? []),
      state: next.state,
      sinceMs: changed ? nowMs : (previous?.sinceMs ?? nowMs),
      wasReady: (previous?.wasReady ?? false) || pod.ready,
      reason: changed ? next.reason : (previous?.reason ?? next.reason),
    };
  }
  const from: DrainState | 'new' = previous?.state ?? 'new';
  const transition: Transition | undefined = from === rec.state
    ? undefined
    : { uid: rec.uid, key: rec.key, from, to: rec.state, reason: rec.reason, wasReady: rec.wasReady, nodeName: rec.nodeName };
  const actions: PlanAction[] = [];
  if (from === 'draining' && (rec.state === 'serving' || rec.state === 'gone')) {
    actions.push({ kind: 'release', uid: rec.uid, key: rec.key, ips: rec.ips, why: rec.state === 'serving' ? 'serving' : 'gone' });
  }
  if (rec.state === 'draining' && rec.ips.length > 0) actions.push({ kind: 'hold', uid: rec.uid, key: rec.key, ips: rec.ips });
  else if (rec.state === 'gone') {
    const free: string[] = [];
    for (const ip of rec.ips) {
      const holder = liveHolder(ip, rec.uid);
      if (holder === undefined) free.push(ip);
      else actions.push({ kind: 'skip-reused', uid: rec.uid, key: rec.key, ip, holder });
    }
    actions.push({ kind: 'flush', uid: rec.uid, key: rec.key, ips: free });
  }
  return { record: rec, keep: rec.state !== 'serving', transition, actions };
}
