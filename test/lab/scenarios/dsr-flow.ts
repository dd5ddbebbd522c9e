import { NetnsProcess } from '../sys/netns-process.js';
import { CLIENT_ADDRESS } from '../topology/cluster.js';
import { DSR_PODS, SERVICE_PORT, VIP, type DsrCluster, type PodRef } from './dsr-cluster.js';

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
 * long-lived stream from that port (one 512-byte request every 50 ms).
 */
export async function openPinnedFlow(cluster: DsrCluster): Promise<PinnedFlow> {
  const lookups = await cluster.probeVia(2, CANDIDATE_PORTS);
  const hit = CANDIDATE_PORTS.map((port) => ({ port, pod: DSR_PODS.find((pod) => pod.name === lookups.get(port)) })).find((entry) => entry.pod?.node === 1);
  if (hit?.pod === undefined) throw new Error(`no candidate port reached a node-1 pod through node-2: ${JSON.stringify([...lookups])}`);
  // the probe's connection was RST-closed: the same port opens a fresh flow that mh maps the same way
  const chosen = { port: hit.port, pod: hit.pod };
  await cluster.routeVipVia(2);
  const stream = NetnsProcess.startScript('stream', cluster.live.netns('client'), '../traffic/stream-client.ts', [CLIENT_ADDRESS, VIP, String(SERVICE_PORT), String(chosen.port), '50', '512', '3000']);
  const connected = (await stream.waitFor((line) => (line as { k?: string }).k === 'tconn' || (line as { k?: string }).k === 'tfail', 120_000, 'the stream\'s connection')) as { k: string; pod?: string; detail?: string };
  if (connected.k !== 'tconn') throw new Error(`the long-lived stream did not connect: ${connected.detail ?? ''}`);
  if (connected.pod !== chosen.pod.name) throw new Error(`the stream reached ${connected.pod ?? '?'}, expected ${chosen.pod.name}`);
  return { port: chosen.port, pod: chosen.pod, stream };
}
