import { NetnsProcess } from '../sys/netns-process.js';
import { CLIENT_ADDRESS } from '../topology/cluster.js';
import { DSR_PODS, SERVICE_PORT, VIP, type DsrCluster, type PodRef } from './dsr-cluster.js';

/**
 * How long the stream's client waits for an answer before it calls the stream broken. A node
 * loss is an outage of the path until the route moves (BGP; here two `ip` commands, ~1-2 s in
 * the TCG guest) and TCP's retransmission backoff (0.2, 0.6, 1.4, 3.0 s, ...) decides when
 * the first packet takes the new path: a surviving stream's answer can take a few seconds
 * (docs/benchmarks.md, lab). 10 s tells that delay from a
 * broken stream (a reset, or packets that reach no pod).
 */
export const STREAM_TIMEOUT_MS = 10_000;

/** Source ports tried for the long-lived flow; the first that node-2 sends to a pod on node-1 is used. */
const CANDIDATE_PORTS = Array.from({ length: 48 }, (_, index) => 31000 + index);

export interface PinnedFlow {
  port: number;
  pod: PodRef;
  stream: NetnsProcess;
}

/**
 * The field's flow: a client's TCP connection entering through node-2 to a pod on node-1.
 * Finds a source port that node-2's Maglev lookup sends to a node-1 pod, then opens a
 * long-lived stream from that port (one 512-byte request every 50 ms, STREAM_TIMEOUT_MS).
 */
export async function openPinnedFlow(cluster: DsrCluster): Promise<PinnedFlow> {
  const lookups = await cluster.probeVia(2, CANDIDATE_PORTS);
  const hit = CANDIDATE_PORTS.map((port) => ({ port, pod: DSR_PODS.find((pod) => pod.name === lookups.get(port)) })).find((entry) => entry.pod?.node === 1);
  if (hit?.pod === undefined) throw new Error(`no candidate port reached a node-1 pod through node-2: ${JSON.stringify([...lookups])}`);
  // the probe's connection was RST-closed: the same port opens a fresh flow that mh maps the same way
  const chosen = { port: hit.port, pod: hit.pod };
  await cluster.routeVipVia(2);
  const stream = NetnsProcess.startScript('stream', cluster.live.netns('client'), '../traffic/stream-client.ts', [CLIENT_ADDRESS, VIP, String(SERVICE_PORT), String(chosen.port), '50', '512', String(STREAM_TIMEOUT_MS)]);
  const connected = (await stream.waitFor((line) => (line as { k?: string }).k === 'tconn' || (line as { k?: string }).k === 'tfail', 120_000, 'the stream\'s connection')) as { k: string; pod?: string; detail?: string };
  if (connected.k !== 'tconn') throw new Error(`the long-lived stream did not connect: ${connected.detail ?? ''}`);
  if (connected.pod !== chosen.pod.name) throw new Error(`the stream reached ${connected.pod ?? '?'}, expected ${chosen.pod.name}`);
  return { port: chosen.port, pod: chosen.pod, stream };
}
