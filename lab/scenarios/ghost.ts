import { AgentHandle } from '../control/agent-handle.js';
import { labAgentBundle } from '../sys/agent-bundle.js';
import { useHostScriptBundles } from '../sys/bundle-scripts.js';
import { ApiHandle } from '../control/api-handle.js';
import { publishWorkload } from '../control/api-objects.js';
import { summarizeTcp, summarizeUdp, type GhostEvent, type TcpSummary, type UdpSummary } from '../measure/ghost-summary.js';
import { bucketRequests, type Series } from '../measure/series.js';
import { installObserver, readObserver } from '../proxy/observe-nft.js';
import { syncKubeProxy } from '../proxy/kube-proxy-nft.js';
import { runIn } from '../sys/exec.js';
import { countKept, entryIdsOf } from '../measure/entry-ids.js';
import { openNetlink, type NativeNetlink } from 'netlink-native';
import { NetnsProcess } from '../sys/netns-process.js';
import { applyTopology, sweepStaleNamespaces, type LiveTopology } from '../topology/apply.js';
import { controlAddressFor, nodeControlAddress } from '../topology/cluster.js';
import { makeRunPrefix } from '../topology/names.js';
import { managedPod } from '../../test/apiserver/pods.js';
import type { TrafficLine } from '../traffic/wire.js';
import { DEFAULT_GHOST_TIMING, GHOST_CLIENT, GHOST_NAMESPACE, SURVIVOR, VICTIM, ghostService, ghostTopology, type GhostTiming } from './ghost-plan.js';
import { nowMs, sleep } from './timeline.js';

export interface GhostRunOptions {
  withConndrain: boolean;
  timing?: GhostTiming;
  /** Progress lines for people (stderr in the CLI). */
  log?: (message: string) => void;
}

/** One run's figures (without or with conndrain). */
export interface GhostRun extends UdpSummary {
  conndrain: boolean;
  tcp: TcpSummary;
  /** Packets the node still sent towards the deleted pod's IP after its deletion (nft counter after DNAT). */
  packetsToDeadIp: number;
  /** Seconds after the deletion when the last such packet was seen (sampled every 250 ms); 0: none. */
  deadIpTrafficSeconds: number;
  /** Conntrack entries of the surviving pod's flows before the event, and how many are the same entries after. */
  otherPodEntries: { before: number; kept: number };
  /** The node's UDP conntrack timeouts (seconds): how long an idle ghost entry would live. */
  udpTimeouts: { unreplied: number; stream: number };
  series: { udp: Series; tcp: Series };
}

const podLabel = (line: unknown): boolean => (line as { k?: string }).k === 'ready';

async function readUdpTimeouts(netns: string): Promise<{ unreplied: number; stream: number }> {
  const text = await runIn(netns, 'sysctl', ['-n', 'net.netfilter.nf_conntrack_udp_timeout', 'net.netfilter.nf_conntrack_udp_timeout_stream']);
  const [unreplied = 0, stream = 0] = text.trim().split('\n').map(Number);
  return { unreplied, stream };
}

function startPod(live: LiveTopology, name: string): NetnsProcess {
  return NetnsProcess.startScript(name, live.netns(name), '../traffic/pod-server.ts', [name, '53', '80']);
}

/**
 * Scale-down with live clients: pod-1-2 turns unready and terminating (kube-proxy drops it
 * from the service; its existing flows keep their DNAT and it still answers them), then it is
 * deleted (its namespace and veth go away, the API stand-in publishes DELETED). The client's
 * flows that were DNATed to it keep going to the dead IP for as long as their conntrack
 * entries live, unless an agent deletes those entries.
 */
export async function runGhostOnce(options: GhostRunOptions): Promise<GhostRun> {
  const timing = options.timing ?? DEFAULT_GHOST_TIMING;
  const log = options.log ?? (() => undefined);
  await Promise.all([sweepStaleNamespaces(), useHostScriptBundles(), options.withConndrain ? labAgentBundle() : undefined]);
  const live = await applyTopology(ghostTopology(), makeRunPrefix());
  const processes: NetnsProcess[] = [];
  let api: ApiHandle | undefined;
  let agent: AgentHandle | undefined;
  let conntrack: NativeNetlink | undefined;
  try {
    const node = live.netns('node-1');
    await syncKubeProxy(node, [ghostService([SURVIVOR, VICTIM])]);
    await installObserver(node, [VICTIM.ip]);
    // recorded at once so that a failure further down still stops them
    processes.push(startPod(live, SURVIVOR.name), startPod(live, VICTIM.name));
    const podsReady = Promise.all(processes.map((pod) => pod.waitFor(podLabel, 60_000, 'ready line')));
    podsReady.catch(() => undefined); // awaited below; a failure before that must not go unhandled
    api = await ApiHandle.start(live.netns('control'), 16443, 60_000);
    const service = ghostService([SURVIVOR, VICTIM]);
    await publishWorkload(api, GHOST_NAMESPACE, service);
    for (const pod of [SURVIVOR, VICTIM]) {
      await api.call({ op: 'put', pod: managedPod({ name: pod.name, namespace: GHOST_NAMESPACE, nodeName: 'node-1', ips: [pod.ip], drain: '30s', app: service.name }) });
    }
    if (options.withConndrain) {
      log('starting the conndrain agent in node-1 (the real process, watching the API stand-in)');
      agent = await AgentHandle.start(api, { bundle: await labAgentBundle(), nodeName: 'node-1', netns: node, apiAddress: controlAddressFor(1), nodeAddress: nodeControlAddress(1) });
      await agent.waitReady(api, 90_000);
    }
    await podsReady;
    const victimServer = processes[1]!;
    const client = NetnsProcess.startScript('client', live.netns('client'), '../traffic/client.ts', [JSON.stringify(GHOST_CLIENT)]);
    processes.push(client);
    await client.waitFor(podLabel, 60_000, 'balanced flows');
    log(`traffic flowing: ${GHOST_CLIENT.udp?.flowsPerPod} UDP flows and ${GHOST_CLIENT.tcp?.flowsPerPod} TCP streams per pod`);
    await sleep(timing.warmupMs);

    conntrack = openNetlink({ netns: node });
    const survivorEntries = await entryIdsOf(conntrack, SURVIVOR.ip);
    log(`${VICTIM.name} turns unready and terminating; kube-proxy removes it from the service`);
    await api.call({ op: 'deleting', namespace: GHOST_NAMESPACE, name: VICTIM.name, graceSeconds: 30 });
    await api.call({ op: 'ready', namespace: GHOST_NAMESPACE, name: VICTIM.name, ready: false });
    await syncKubeProxy(node, [ghostService([SURVIVOR])]);
    await sleep(timing.drainMs);

    log(`${VICTIM.name} is deleted: its process and network namespace go away`);
    const before = (await readObserver(node, [VICTIM.ip])).get(VICTIM.ip) ?? 0;
    const t0 = nowMs();
    await victimServer.stop(500, 'SIGTERM');
    await live.removeNamespace(VICTIM.name);
    await api.call({ op: 'delete', namespace: GHOST_NAMESPACE, name: VICTIM.name });

    let lastDeadPacketMs = 0;
    let counted = before;
    const end = t0 + timing.windowMs;
    while (nowMs() < end) {
      await sleep(250);
      const readAt = nowMs() - t0; // the counter is read after this: any packet it counts was sent before
      const now = (await readObserver(node, [VICTIM.ip])).get(VICTIM.ip) ?? 0;
      if (now > counted) lastDeadPacketMs = readAt;
      counted = now;
    }
    const survivorEntriesAfter = await entryIdsOf(conntrack, SURVIVOR.ip);
    await client.stop();
    const lines = client.lines.filter((line): line is TrafficLine => typeof line === 'object' && line !== null && 'k' in line);
    const event: GhostEvent = { t0, udpTimeoutMs: GHOST_CLIENT.udp!.timeoutMs, tcpTimeoutMs: GHOST_CLIENT.tcp!.timeoutMs };
    const dying = new Set([VICTIM.name]);
    const from = -(timing.warmupMs + timing.drainMs) / 1000;
    const to = timing.windowMs / 1000;
    return {
      conndrain: options.withConndrain,
      ...summarizeUdp(lines, dying, event),
      tcp: summarizeTcp(lines, dying, event),
      packetsToDeadIp: counted - before,
      otherPodEntries: { before: survivorEntries.size, kept: countKept(survivorEntries, survivorEntriesAfter) },
      deadIpTrafficSeconds: Math.round(lastDeadPacketMs) / 1000,
      udpTimeouts: await readUdpTimeouts(node),
      series: { udp: bucketRequests(lines, 'u', t0, from, to, 250), tcp: bucketRequests(lines, 't', t0, from, to, 250) },
    };
  } finally {
    conntrack?.close();
    await Promise.all(processes.map((process) => process.stop()));
    await agent?.stop();
    await api?.stop();
    await live.destroy();
  }
}
