/**
 * The simulated cluster of bench/scale, shared by its processes: pod i's name, IP, node and
 * IPVS service. 5,000 nodes; about 30 pods on the agent's node (`node-0`) whatever the size.
 */
import { packIpv4 } from '../../src/store/ipv4.js';

export const NODES = 5000;
export const AGENT_NODE = 'node-0';
export const SERVICES = 2000;
export const LOCAL_PODS = 30;

/** One in LOCAL_EVERY steps of the readiness storm and the IP churn concerns a pod of the agent's node. */
export const LOCAL_EVERY = 25;
/** The IP churn's places elsewhere: each is replaced every PLACES * 4 / rate seconds (20 s at 200/s), its IP reused every other time. */
export const IP_CHURN_PLACES = 1000;
/** The readiness storm's places elsewhere that flip (those replaced come after them, each replaced once). */
export const STORM_FLIP_PLACES = 2000;

export function podIp(i: number): string {
  return `10.${64 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;
}

const FIRST_POD_IP = packIpv4(podIp(0)) as number;

/** The i of podIp(i) for an address of this cluster's pods (any i >= 0), or -1. */
export function podIpIndex(address: string): number {
  const packed = packIpv4(address);
  return packed === undefined || packed < FIRST_POD_IP ? -1 : packed - FIRST_POD_IP;
}

/**
 * Pod i's name, in a Deployment pod's form (`<name>-<pod-template-hash>-<suffix>`, 24
 * characters): every node keeps every endpoint's pod name, so its length is part of the agent's
 * memory, as it is of every slice's bytes.
 */
export function podName(i: number): string {
  return `checkout-${hex(Math.imul((i >>> 10) + 1, 0x2545f491), 9)}-${(i % 36 ** 5).toString(36).padStart(5, '0')}`;
}

export function podNode(i: number, pods: number): string {
  const every = Math.max(1, Math.floor(pods / LOCAL_PODS));
  return i % every === 0 ? AGENT_NODE : `node-${1 + (i % (NODES - 1))}`;
}

const hex = (n: number, width: number): string => (n >>> 0).toString(16).padStart(width, '0').slice(-width);

/** Pod i's uid, in the API server's form (a UUID: 36 characters), as the agent stores real ones. */
export function podUid(i: number): string {
  const mix = Math.imul(i + 1, 0x9e3779b1);
  return `${hex(mix, 8)}-${hex(i >>> 16, 4)}-4${hex(i >>> 4, 3)}-8${hex(mix >>> 12, 3)}-${hex(i, 4)}${hex(Math.imul(mix, 31), 8)}`;
}

/** Pod i's drain id, in the webhook's form (32 hex digits). */
export function podDrainId(i: number): string {
  const mix = Math.imul(i + 7, 0x85ebca6b);
  return `${hex(mix, 8)}${hex(i, 8)}${hex(Math.imul(mix, 13), 8)}${hex(mix ^ i, 8)}`;
}

export const NAMESPACES = 200;

export function podNamespace(i: number): string {
  return `ns-${i % NAMESPACES}`;
}

/** The IPVS virtual service whose real server pod i is (every node's kube-proxy has them all). */
export function serviceAddress(i: number): string {
  const s = i % SERVICES;
  return `10.96.${s >> 8}.${s & 255}`;
}

/**
 * Milliseconds on the machine's monotonic clock (CLOCK_MONOTONIC, through process.hrtime),
 * comparable across the bench's processes. performance.timeOrigin is not: it differs from
 * process to process by a constant of up to a second (seen with some V8 flags), which shifted
 * every latency of a run by that much.
 */
export function wallMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
