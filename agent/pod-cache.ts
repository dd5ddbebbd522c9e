/**
 * The agent's view of managed pods, fed by the watch: the plan's input, plus the indexes the
 * drain API (drain-id -> pod) and the ghost cleanup (IP -> live pods) ask. Stores only what
 * it needs of each pod (memory: 10,000 pods must fit well under 150 MB).
 */
import { ANNOTATION_DRAIN_ID, ANNOTATION_FLOW_PINNING } from '../src/contract.js';
import { parseDrainRequest, type DrainRequest } from '../src/annotations.js';
import type { PodLike } from '../src/pod/pod-like.js';
import { viewPod, type PodView } from '../src/pod/view.js';

export interface CachedPod {
  view: PodView;
  namespace: string;
  name: string;
  resourceVersion: string | undefined;
  drain: DrainRequest;
  /** The pod's owners turned flow pinning off (annotation conndrain.io/flow-pinning: off). */
  flowPinningOff: boolean;
}

export class PodCache {
  private readonly byUid = new Map<string, CachedPod>();
  private readonly byDrainId = new Map<string, string>();
  private readonly byIp = new Map<string, Set<string>>();
  /** Uids of pods with a deletionTimestamp (their state changes with time alone). */
  private readonly deletingUids = new Set<string>();

  constructor(private readonly goneSlackMs: number) {}

  get size(): number {
    return this.byUid.size;
  }

  /** Pods being deleted: while any is, the plan must run every interval (grace elapses). */
  get deleting(): number {
    return this.deletingUids.size;
  }

  /** Uids of the pods that opted out of flow pinning. */
  flowPinningOptOuts(): Set<string> {
    const out = new Set<string>();
    for (const [uid, pod] of this.byUid) if (pod.flowPinningOff) out.add(uid);
    return out;
  }

  upsert(pod: PodLike): CachedPod {
    const view = viewPod(pod, this.goneSlackMs);
    this.remove(view.uid);
    const annotations = pod.metadata?.annotations ?? {};
    const cached: CachedPod = {
      view,
      namespace: pod.metadata?.namespace ?? '',
      name: pod.metadata?.name ?? '',
      resourceVersion: pod.metadata?.resourceVersion,
      drain: parseDrainRequest(annotations),
      flowPinningOff: ['off', 'false'].includes((annotations[ANNOTATION_FLOW_PINNING] ?? '').trim().toLowerCase()),
    };
    this.byUid.set(view.uid, cached);
    if (view.deleting) this.deletingUids.add(view.uid);
    const drainId = annotations[ANNOTATION_DRAIN_ID];
    if (drainId !== undefined && drainId !== '') this.byDrainId.set(drainId, view.uid);
    for (const ip of view.ips) {
      let set = this.byIp.get(ip);
      if (set === undefined) this.byIp.set(ip, (set = new Set()));
      set.add(view.uid);
    }
    return cached;
  }

  /** Removes by uid (or by the pod object, whose uid is read). */
  remove(uidOrPod: string | PodLike): CachedPod | undefined {
    const uid = typeof uidOrPod === 'string' ? uidOrPod : viewPod(uidOrPod, this.goneSlackMs).uid;
    const cached = this.byUid.get(uid);
    if (cached === undefined) return undefined;
    this.byUid.delete(uid);
    this.deletingUids.delete(uid);
    if (cached.view.drainId !== undefined && this.byDrainId.get(cached.view.drainId) === uid) this.byDrainId.delete(cached.view.drainId);
    for (const ip of cached.view.ips) {
      const set = this.byIp.get(ip);
      set?.delete(uid);
      if (set?.size === 0) this.byIp.delete(ip);
    }
    return cached;
  }

  get(uid: string): CachedPod | undefined {
    return this.byUid.get(uid);
  }

  byDrain(drainId: string): CachedPod | undefined {
    const uid = this.byDrainId.get(drainId);
    return uid === undefined ? undefined : this.byUid.get(uid);
  }

  views(): PodView[] {
    return [...this.byUid.values()].map((c) => c.view);
  }

  /**
   * A pod in the API that is not gone and holds `ip` (the IP-reuse check before a flush):
   * not terminal and not past its deletionTimestamp + slack.
   */
  liveHolder(ip: string, nowMs: number, exceptUid?: string): CachedPod | undefined {
    for (const uid of this.byIp.get(ip) ?? []) {
      if (uid === exceptUid) continue;
      const cached = this.byUid.get(uid);
      if (cached === undefined) continue;
      const v = cached.view;
      if (v.terminal) continue;
      if (v.goneAtMs !== undefined && nowMs >= v.goneAtMs) continue;
      return cached;
    }
    return undefined;
  }
}
