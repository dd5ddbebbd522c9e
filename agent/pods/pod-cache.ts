/**
 * The agent's store of managed pods, fed by the watch: every managed pod of the cluster
 * (150,000 at Kubernetes' published limit), so it keeps per pod only what the agent reads,
 * packed:
 *
 * - uid and drain id: 16 bytes each in their usual forms (a UUID, 32 hex digits), the text
 *   otherwise (id-column.ts); the name: a string;
 * - namespace, node name and drain settings (the parsed conndrain.io annotations, shared by
 *   every pod of a workload): ids into reference-counted intern tables (interner.ts);
 * - readiness, terminal phase, flow-pinning opt-out: bits; the time a deleting pod counts as
 *   gone: a float (NaN when not deleting);
 * - one IPv4 address (the common case) as a 32-bit integer, anything else as a list;
 * - indexes: uid -> slot, drain id -> slots, IPv4 -> slots: open-addressing tables of slots in
 *   Int32Arrays (slot-table.ts: a few bytes a pod each, a fraction of a JS Map's entry); the
 *   IPs of pods with anything but one IPv4 address in a Map (multi-index.ts).
 *
 * At cluster scale JS Maps for the indexes were a large share of the agent's live heap (the
 * heap snapshots and their command: docs/scale.md, "The store's indexes").
 *
 * The per-slot columns grow by pages of 4,096 slots (paged-column.ts). Slots of removed pods
 * are reused, so churn does not grow it. The answers (`get`, `byDrain`,
 * `views`, `liveHolder`, `deleting`, `flowPinningOptOuts`) are the ones the full pod objects
 * give (pod-cache.test.ts checks that over random pods and update sequences); a `CachedPod`
 * is built on demand and not kept.
 */
import { ANNOTATION_DRAIN_ID, ANNOTATION_FLOW_PINNING, DOMAIN } from '../../src/contract.js';
import { parseDrainRequest, type DrainRequest } from '../../src/annotations.js';
import { podKey, type PodLike } from '../../src/pod/pod-like.js';
import { viewPod, type PodView } from '../../src/pod/view.js';
import { hashId, IdColumn } from '../../src/store/id-column.js';
import { Interner } from '../../src/store/interner.js';
import { packIpv4, unpackIpv4 } from '../../src/store/ipv4.js';
import { MultiIndex } from './pod-store/multi-index.js';
import { PagedColumn } from '../../src/store/paged-column.js';
import { hashInt, SlotTable } from '../../src/store/slot-table.js';

export interface CachedPod {
  view: PodView;
  namespace: string;
  name: string;
  drain: DrainRequest;
  /** The pod's owners turned flow pinning off (annotation conndrain.io/flow-pinning: off). */
  flowPinningOff: boolean;
}

const READY = 1;
const TERMINAL = 2;
const FLOW_PINNING_OFF = 4;
/** The pod has exactly one IP, an IPv4 address, in `ip4`. */
const ONE_IPV4 = 8;
const HAS_NODE = 16;

const PREFIX = `${DOMAIN}/`;
/** How many recent uid lookups are remembered (a few hundred KB at most). */
const RECENT_LOOKUPS = 4096;

/** The drain settings' intern key: the conndrain.io annotations parseDrainRequest reads, sorted. */
function drainKey(annotations: Record<string, unknown>): string {
  const entries: Array<[string, string]> = [];
  for (const [k, v] of Object.entries(annotations)) {
    if (typeof v === 'string' && k.startsWith(PREFIX) && k !== ANNOTATION_DRAIN_ID && k !== ANNOTATION_FLOW_PINNING) entries.push([k, v]);
  }
  entries.sort((a, b) => (a[0] < b[0] ? -1 : 1));
  return JSON.stringify(entries);
}

export class PodCache {
  private readonly freeSlots: number[] = [];
  private slots = 0;
  private count = 0;
  /** When each slot was last stored (orders slots sharing an IP or a drain id: oldest first). */
  private readonly order = new PagedColumn((n) => new Float64Array(n));
  private stored = 0;
  private readonly uids = new IdColumn();
  private readonly names: Array<string | undefined> = [];
  private readonly drainIds = new IdColumn();
  private readonly ns = new PagedColumn((n) => new Int32Array(n));
  private readonly node = new PagedColumn((n) => new Int32Array(n));
  private readonly drain = new PagedColumn((n) => new Int32Array(n));
  private readonly ip4 = new PagedColumn((n) => new Int32Array(n));
  private readonly flags = new PagedColumn((n) => new Uint8Array(n));
  private readonly goneAt = new PagedColumn((n) => new Float64Array(n));
  private readonly otherIps = new Map<number, string[]>();
  private readonly namespaces = new Interner<string>((k) => k);
  private readonly nodes = new Interner<string>((k) => k);
  private readonly drains = new Interner<DrainRequest>((k) => parseDrainRequest(Object.fromEntries(JSON.parse(k) as Array<[string, string]>)));
  private readonly slotOf = new SlotTable<string>({ hash: hashId, hashAt: (slot) => this.uids.hashAt(slot), matches: (slot, uid) => this.uids.matches(slot, uid), orderOf: (slot) => this.order.get(slot) });
  private readonly byDrainId = new SlotTable<string>({ hash: hashId, hashAt: (slot) => this.drainIds.hashAt(slot), matches: (slot, id) => this.drainIds.matches(slot, id), orderOf: (slot) => this.order.get(slot) });
  /** Pods with exactly one IPv4 address (ONE_IPV4), by it. */
  private readonly byIp4 = new SlotTable<number>({ hash: hashInt, hashAt: (slot) => hashInt(this.ip4.get(slot)), matches: (slot, ip) => this.ip4.get(slot) === ip, orderOf: (slot) => this.order.get(slot) });
  /** Every IP of the other pods (IPv6, several IPs, non-canonical text), as written. */
  private readonly byIpOther = new MultiIndex<string>();
  private readonly optOuts = new Set<number>();
  /** uid -> slot of recent lookups (slotOfUid). */
  private readonly recentSlots = new Map<string, number>();
  private deletingCount = 0;

  constructor(private readonly goneSlackMs: number) {}

  get size(): number {
    return this.count;
  }

  /** Pods being deleted (their state changes with time alone). */
  get deleting(): number {
    return this.deletingCount;
  }

  /** Distinct shared values stored once (namespaces, nodes, drain settings): for tests and metrics. */
  get interned(): { namespaces: number; nodes: number; drainSettings: number } {
    return { namespaces: this.namespaces.size, nodes: this.nodes.size, drainSettings: this.drains.size };
  }

  /** Uids of the pods that opted out of flow pinning. */
  flowPinningOptOuts(): Set<string> {
    const out = new Set<string>();
    for (const slot of this.optOuts) out.add(this.uids.get(slot) as string);
    return out;
  }

  *knownUids(): IterableIterator<string> {
    for (let slot = 0; slot < this.slots; slot++) {
      if (this.names[slot] !== undefined) yield this.uids.get(slot) as string;
    }
  }

  has(uid: string): boolean {
    return this.slotOfUid(uid) !== undefined;
  }

  upsert(pod: PodLike): CachedPod {
    const view = viewPod(pod, this.goneSlackMs);
    this.remove(view.uid);
    const slot = this.freeSlots.pop() ?? this.slots++;
    this.ensure(slot + 1);
    const annotations = pod.metadata?.annotations ?? {};
    this.order.set(slot, this.stored++);
    this.uids.set(slot, view.uid);
    this.slotOf.add(view.uid, slot);
    this.count += 1;
    this.names[slot] = pod.metadata?.name ?? '';
    this.ns.set(slot, this.namespaces.acquire(pod.metadata?.namespace ?? ''));
    let flags = 0;
    if (view.nodeName !== undefined) {
      flags |= HAS_NODE;
      this.node.set(slot, this.nodes.acquire(view.nodeName));
    }
    if (view.ready) flags |= READY;
    if (view.terminal) flags |= TERMINAL;
    if (['off', 'false'].includes((annotations[ANNOTATION_FLOW_PINNING] ?? '').trim().toLowerCase())) {
      flags |= FLOW_PINNING_OFF;
      this.optOuts.add(slot);
    }
    const packed = view.ips.length === 1 ? packIpv4(view.ips[0] as string) : undefined;
    if (packed !== undefined) {
      flags |= ONE_IPV4;
      this.ip4.set(slot, packed);
      this.byIp4.add(packed, slot);
    } else {
      this.otherIps.set(slot, view.ips);
      for (const ip of view.ips) this.byIpOther.add(ip, slot);
    }
    this.flags.set(slot, flags);
    this.goneAt.set(slot, view.goneAtMs ?? Number.NaN);
    if (view.goneAtMs !== undefined) this.deletingCount += 1;
    this.drain.set(slot, this.drains.acquire(drainKey(annotations)));
    const drainId = annotations[ANNOTATION_DRAIN_ID];
    this.drainIds.set(slot, drainId);
    if (drainId !== undefined && drainId !== '') this.byDrainId.add(drainId, slot);
    return this.podAt(slot);
  }

  /** Removes by uid (or by the pod object, whose uid is read); returns what was stored. */
  remove(uidOrPod: string | PodLike): CachedPod | undefined {
    const uid = typeof uidOrPod === 'string' ? uidOrPod : (uidOrPod.metadata?.uid ?? podKey(uidOrPod));
    const slot = this.slotOfUid(uid);
    if (slot === undefined) return undefined;
    this.recentSlots.delete(uid);
    const gone = this.podAt(slot);
    const flags = this.flags.get(slot);
    this.slotOf.delete(uid, slot);
    this.count -= 1;
    this.namespaces.release(this.ns.get(slot));
    if ((flags & HAS_NODE) !== 0) this.nodes.release(this.node.get(slot));
    this.drains.release(this.drain.get(slot));
    if ((flags & FLOW_PINNING_OFF) !== 0) this.optOuts.delete(slot);
    if ((flags & ONE_IPV4) !== 0) this.byIp4.delete(this.ip4.get(slot), slot);
    else {
      for (const ip of this.otherIps.get(slot) ?? []) this.byIpOther.delete(ip, slot);
      this.otherIps.delete(slot);
    }
    if (!Number.isNaN(this.goneAt.get(slot))) this.deletingCount -= 1;
    const drainId = this.drainIds.get(slot);
    if (drainId !== undefined && drainId !== '') this.byDrainId.delete(drainId, slot);
    this.uids.set(slot, undefined);
    this.names[slot] = undefined;
    this.drainIds.set(slot, undefined);
    this.flags.set(slot, 0);
    this.freeSlots.push(slot);
    return gone;
  }

  get(uid: string): CachedPod | undefined {
    const slot = this.slotOfUid(uid);
    return slot === undefined ? undefined : this.podAt(slot);
  }

  /** The plan's view of one pod. */
  view(uid: string): PodView | undefined {
    const slot = this.slotOfUid(uid);
    return slot === undefined ? undefined : this.viewAt(slot);
  }

  /** The pod carrying this drain id (the latest stored, should two carry it). */
  byDrain(drainId: string): CachedPod | undefined {
    const slots = this.byDrainId.slots(drainId);
    const slot = slots[slots.length - 1];
    return slot === undefined ? undefined : this.podAt(slot);
  }

  views(): PodView[] {
    const out: PodView[] = [];
    for (let slot = 0; slot < this.slots; slot++) if (this.names[slot] !== undefined) out.push(this.viewAt(slot));
    return out;
  }

  /** Every stored pod's IPs, without building views. */
  forEachIp(fn: (ip: string) => void): void {
    for (let slot = 0; slot < this.slots; slot++) if (this.names[slot] !== undefined) for (const ip of this.ipsAt(slot)) fn(ip);
  }

  /**
   * A pod in the API that is not gone and holds `ip` (the IP-reuse check before a flush):
   * not terminal and not past its deletionTimestamp + slack.
   */
  liveHolder(ip: string, nowMs: number, exceptUid?: string): CachedPod | undefined {
    const packed = packIpv4(ip);
    const other = this.byIpOther.slots(ip);
    let slots: readonly number[] = packed === undefined ? other : this.byIp4.slots(packed);
    if (packed !== undefined && other.length > 0) slots = [...slots, ...other].sort((a, b) => this.order.get(a) - this.order.get(b));
    for (const slot of slots) {
      if (exceptUid !== undefined && this.uids.matches(slot, exceptUid)) continue;
      if ((this.flags.get(slot) & TERMINAL) !== 0) continue;
      const goneAt = this.goneAt.get(slot);
      if (!Number.isNaN(goneAt) && nowMs >= goneAt) continue;
      return this.podAt(slot);
    }
    return undefined;
  }

  /**
   * The slot of `uid`. The pods asked about again and again (held, draining, this node's) are
   * answered from a small Map of recent lookups (its string keys hash once), not by parsing the
   * packed uid each time; remove() drops a uid from it before its slot can be reused.
   */
  private slotOfUid(uid: string): number | undefined {
    const recent = this.recentSlots.get(uid);
    if (recent !== undefined) return recent;
    const slot = this.slotOf.first(uid);
    if (slot === undefined) return undefined;
    if (this.recentSlots.size >= RECENT_LOOKUPS) this.recentSlots.clear();
    this.recentSlots.set(uid, slot);
    return slot;
  }

  private ensure(need: number): void {
    for (const column of [this.order, this.ns, this.node, this.drain, this.ip4, this.flags, this.goneAt, this.uids, this.drainIds]) column.ensure(need);
  }

  /** Bytes of the store's typed arrays: columns and index tables (metrics, the bench). */
  get columnBytes(): number {
    const columns = [this.order, this.ns, this.node, this.drain, this.ip4, this.flags, this.goneAt, this.uids, this.drainIds].reduce((n, c) => n + c.bytes, 0);
    return columns + this.slotOf.bytes + this.byDrainId.bytes + this.byIp4.bytes;
  }

  private ipsAt(slot: number): string[] {
    return (this.flags.get(slot) & ONE_IPV4) !== 0 ? [unpackIpv4(this.ip4.get(slot))] : [...(this.otherIps.get(slot) ?? [])];
  }

  private viewAt(slot: number): PodView {
    const flags = this.flags.get(slot);
    const goneAt = this.goneAt.get(slot);
    return {
      uid: this.uids.get(slot) as string,
      key: `${this.namespaces.value(this.ns.get(slot))}/${this.names[slot] ?? ''}`,
      nodeName: (flags & HAS_NODE) !== 0 ? this.nodes.value(this.node.get(slot)) : undefined,
      ips: this.ipsAt(slot),
      ready: (flags & READY) !== 0,
      deleting: !Number.isNaN(goneAt),
      goneAtMs: Number.isNaN(goneAt) ? undefined : goneAt,
      terminal: (flags & TERMINAL) !== 0,
      drainId: this.drainIds.get(slot),
    };
  }

  private podAt(slot: number): CachedPod {
    return {
      view: this.viewAt(slot),
      namespace: this.namespaces.value(this.ns.get(slot)),
      name: this.names[slot] ?? '',
      drain: this.drains.value(this.drain.get(slot)),
      flowPinningOff: (this.flags.get(slot) & FLOW_PINNING_OFF) !== 0,
    };
  }
}
