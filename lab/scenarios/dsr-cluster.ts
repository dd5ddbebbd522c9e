import { AgentHandle } from '../control/agent-handle.js';
import { labAgentBundle } from '../sys/agent-bundle.js';
import { ApiHandle } from '../control/api-handle.js';
import { publishWorkload } from '../control/api-objects.js';
import { managedPod } from '../../test/apiserver/pods.js';
import { NativeNetlink } from 'netlink-native';
import type { IpvsDestination } from 'netlink-native/types';
import { parsePinCounters } from '../../src/flowpin/nft-ruleset.js';
import { run } from '../sys/exec.js';
import { dsrPodSteps, ipvsNodeSteps } from '../proxy/dsr-pod.js';
import { runSteps, type ScriptStep } from '../sys/script.js';
import { cleanupStaleServices, programIpvsService, removeUnreadyEndpoint, type DrainDecision } from '../proxy/kube-router-ipvs.js';
import type { ServiceState } from '../proxy/service.js';
import { NetnsProcess } from '../sys/netns-process.js';
import { applyTopology, sweepStaleNamespaces, type LiveTopology } from '../topology/apply.js';
import { CLIENT_ADDRESS, buildClusterTopology, controlAddressFor, nodeControlAddress, nodeName, nodeUplinkAddress, podAddress, podName } from '../topology/cluster.js';
import { makeRunPrefix } from '../topology/names.js';
import { sleep } from './timeline.js';

/**
 * The DSR/Maglev cluster the VM scenarios share (inside the QEMU guest, real IPVS):
 * nodes 1-3 run kube-router-style IPVS (mh + mh-fallback,mh-port, IPIP tunnel, sloppy_tcp=1)
 * for VIP 10.96.100.1:80; pods pod-1-1, pod-1-2 (node-1), pod-2-1 (node-2), pod-3-1 (node-3)
 * answer DSR; the client's route to the VIP is what BGP would announce (one next hop at a time
 * here, so the lab decides which node a flow enters). node-4 is a reference: the same IPVS
 * service, never drained, never routed to except to ask "which pod did this flow map to
 * before the drain?".
 */
export const VIP = '10.96.100.1';
export const SERVICE_PORT = 80;
export const REAL_NODES = [1, 2, 3] as const;
export const REFERENCE_NODE = 4;
export const NAMESPACE = 'shop';
const PODS: readonly (readonly [number, number])[] = [[1, 1], [1, 2], [2, 1], [3, 1]];

export interface PodRef {
  name: string;
  ip: string;
  node: number;
}

export const DSR_PODS: PodRef[] = PODS.map(([node, k]) => ({ name: podName(node, k), ip: podAddress(node, k), node }));

export function dsrService(pods: readonly PodRef[] = DSR_PODS): ServiceState {
  return { name: 'shop', address: VIP, ports: [{ name: 'http', protocol: 'tcp', port: SERVICE_PORT, targetPort: SERVICE_PORT }], endpoints: pods.map((pod) => ({ pod: pod.name, ip: pod.ip })) };
}

const NO_RP_FILTER = { 'net.ipv4.conf.all.rp_filter': '0', 'net.ipv4.conf.default.rp_filter': '0' };

/** A node's IPVS and nftables as flow pinning sees them (diagnostics in the results). */
export interface NodePinningState {
  original: string[];
  twins: Record<string, string[]>;
  pinnedPackets: number | null;
}

function podNameOf(ip: string): string {
  return DSR_PODS.find((pod) => pod.ip === ip)?.name ?? ip;
}

export class DsrCluster {
  readonly processes: NetnsProcess[] = [];
  readonly agents: AgentHandle[] = [];
  private probeSeq = 1;
  readonly netlinks = new Map<number, NativeNetlink>();
  /** IPVS services the kube-router stand-in's stale cleanup deleted on each node (conndrain's twins). */
  readonly staleDeletedByProxy: Record<string, number> = {};

  private constructor(
    readonly live: LiveTopology,
    readonly api: ApiHandle,
    readonly probe: NetnsProcess,
  ) {}

  static async start(withConndrain: boolean, log: (message: string) => void): Promise<DsrCluster> {
    await sweepStaleNamespaces();
    const topology = buildClusterTopology({
      nodes: 4,
      podsPerNode: { 1: 2, 2: 1, 3: 1 },
      serviceCidrs: [`${VIP}/32`],
      serviceNextHops: [2],
      control: true,
      nodeSysctls: { ...NO_RP_FILTER, 'net.ipv4.conf.all.accept_local': '1' },
      clientSysctls: NO_RP_FILTER,
    });
    log(`cluster: creating ${topology.namespaces.length} namespaces, ${topology.links.length} veth pairs`);
    const live = await applyTopology(topology, makeRunPrefix());
    log('cluster: topology up; preparing IPVS nodes and DSR pods');
    const cleanup: (() => Promise<unknown>)[] = [() => live.destroy()];
    try {
      const steps: ScriptStep[] = [];
      for (let node = 1; node <= REFERENCE_NODE; node++) steps.push(...ipvsNodeSteps(live.netns(nodeName(node)), VIP, { 'net.ipv4.vs.sloppy_tcp': '1' }));
      for (const pod of DSR_PODS) steps.push(...dsrPodSteps(live.netns(pod.name), VIP));
      await runSteps(steps);
      const servers = DSR_PODS.map((pod) => NetnsProcess.startScript(pod.name, live.netns(pod.name), '../traffic/pod-server.ts', [pod.name, '53', String(SERVICE_PORT)]));
      cleanup.push(() => Promise.all(servers.map((server) => server.stop())));
      log('cluster: pods starting; starting the API stand-in');
      const api = await ApiHandle.start(live.netns('control'), 16443, 180_000);
      log('cluster: API stand-in up; programming IPVS on 4 nodes');
      cleanup.push(() => api.stop());
      const probe = NetnsProcess.startScript('probe', live.netns('client'), '../traffic/probe-client.ts', [CLIENT_ADDRESS, VIP, String(SERVICE_PORT)]);
      cleanup.push(() => probe.stop());
      const cluster = new DsrCluster(live, api, probe);
      cluster.processes.push(...servers);
      cleanup.push(() => Promise.all(cluster.agents.map((agent) => agent.stop())));
      cleanup.push(() => {
        for (const handle of cluster.netlinks.values()) handle.close();
        return Promise.resolve();
      });
      for (let node = 1; node <= REFERENCE_NODE; node++) await programIpvsService(cluster.ipvs(node), dsrService());
      await publishWorkload(api, NAMESPACE, dsrService());
      for (const pod of DSR_PODS) await api.call({ op: 'put', pod: managedPod({ name: pod.name, namespace: NAMESPACE, nodeName: nodeName(pod.node), ips: [pod.ip], drain: '60s', app: dsrService().name }) });
      if (withConndrain) {
        log('starting a conndrain agent on node-1, node-2 and node-3');
        const bundle = await labAgentBundle();
        for (const node of REAL_NODES) {
          cluster.agents.push(await AgentHandle.start(api, { bundle, nodeName: nodeName(node), netns: live.netns(nodeName(node)), apiAddress: controlAddressFor(node), nodeAddress: nodeControlAddress(node) }));
        }
        for (const agent of cluster.agents) await agent.waitReady(api, 300_000);
      }
      await Promise.all([...servers, probe].map((process) => process.waitFor((line) => (line as { k?: string }).k === 'ready', 120_000, 'ready line')));
      log('cluster: ready');
      return cluster;
    } catch (error) {
      for (const step of cleanup.reverse()) await step().catch(() => undefined);
      throw error;
    }
  }

  ipvs(node: number): NativeNetlink {
    let handle = this.netlinks.get(node);
    if (handle === undefined) {
      handle = NativeNetlink.open({ netns: this.live.netns(nodeName(node)) });
      this.netlinks.set(node, handle);
    }
    return handle;
  }

  /** The command that points the client's route to the VIP at one node (for a script). */
  vipRouteStep(node: number): ScriptStep {
    return ['ip', '-n', this.live.netns('client'), 'route', 'replace', `${VIP}/32`, 'via', nodeUplinkAddress(node), 'src', CLIENT_ADDRESS];
  }

  /** Points the client's route to the VIP at one node (what BGP does when a node goes or comes). */
  async routeVipVia(node: number): Promise<void> {
    await this.live.setRoute({ ns: 'client', to: `${VIP}/32`, via: [nodeUplinkAddress(node)], src: CLIENT_ADDRESS });
  }

  /** For each source port, the pod a new connection through `node` reaches (null: none answered). */
  async probeVia(node: number, ports: readonly number[], timeoutMs = 3000): Promise<Map<number, string | null>> {
    await this.routeVipVia(node);
    const id = this.probeSeq++;
    const answer = this.probe.waitFor((line) => (line as { k?: string; id?: number }).k === 'probe' && (line as { id?: number }).id === id, ports.length * timeoutMs + 30_000, `probe ${id}`);
    this.probe.send(JSON.stringify({ id, ports, timeoutMs }));
    const { results } = (await answer) as { results: { port: number; pod: string | null }[] };
    return new Map(results.map((result) => [result.port, result.pod]));
  }

  /**
   * The pod turns unready: the API says so (agents react), then, as kube-router would a moment
   * later, every node removes the endpoint its own way. Returns each node's decision.
   */
  async makeUnready(pod: PodRef, proxyDelayMs = 500): Promise<Record<string, DrainDecision>> {
    await this.api.call({ op: 'ready', namespace: NAMESPACE, name: pod.name, ready: false });
    await sleep(proxyDelayMs);
    const decisions: Record<string, DrainDecision> = {};
    for (const node of REAL_NODES) {
      decisions[nodeName(node)] = await removeUnreadyEndpoint(this.ipvs(node), dsrService(), pod.ip);
      this.staleDeletedByProxy[nodeName(node)] = await cleanupStaleServices(this.ipvs(node), [dsrService()]);
    }
    return decisions;
  }

  /**
   * Waits until each node's flow pinning is in place for the draining pod: a twin (fwmark
   * service) holding it at a non-zero weight and conndrain's nftables table. Resolves with the
   * seconds it took; rejects after `timeoutMs`.
   */
  async waitPinned(pod: PodRef, nodes: readonly number[], timeoutMs: number): Promise<number> {
    const started = Date.now();
    for (;;) {
      const states = await Promise.all(nodes.map((node) => this.pinningState(node)));
      const pinned = states.every((state) => state.pinnedPackets !== null && Object.values(state.twins).some((servers) => servers.some((server) => server.startsWith(`${pod.name}@`) && !server.startsWith(`${pod.name}@0`))));
      if (pinned) return (Date.now() - started) / 1000;
      if (Date.now() - started > timeoutMs) throw new Error(`flow pinning not in place on nodes ${nodes.join(', ')} within ${timeoutMs} ms: ${JSON.stringify(states)}`);
      await sleep(500);
    }
  }

  /** Waits until every real node has the pod's servers present at weight 0 (the agents' hold); resolves with the seconds it took. */
  async waitHeld(pod: PodRef, timeoutMs: number): Promise<number> {
    const started = Date.now();
    for (;;) {
      const weights = await this.weightsOf(pod);
      if (Object.values(weights).every((weight) => weight === 0)) return (Date.now() - started) / 1000;
      if (Date.now() - started > timeoutMs) throw new Error(`the pod is not held at weight 0 on every node within ${timeoutMs} ms: ${JSON.stringify(weights)}`);
      await sleep(500);
    }
  }

  /** What each real node's IPVS holds for the drained pod now: its weight, or null when absent. */
  async weightsOf(pod: PodRef): Promise<Record<string, number | null>> {
    const weights: Record<string, number | null> = {};
    for (const node of REAL_NODES) {
      const destinations = await this.ipvs(node).listDestinations({ family: 4, protocol: 'tcp', address: VIP, port: SERVICE_PORT });
      weights[nodeName(node)] = destinations.find((destination) => destination.address === pod.ip)?.weight ?? null;
    }
    return weights;
  }

  /**
   * What flow pinning looks like on a node now: the original service's servers in list order
   * (address@weight), each fwmark (twin) service's servers with their connection counts, and
   * the packets conndrain's nftables rules marked (null: no conndrain table).
   */
  async pinningState(node: number): Promise<NodePinningState> {
    const ipvs = this.ipvs(node);
    const describe = (d: IpvsDestination): string => `${podNameOf(d.address)}@${d.weight}${d.activeConnections + d.inactiveConnections > 0 ? `(${d.activeConnections}/${d.inactiveConnections})` : ''}`;
    const original = (await ipvs.listDestinations({ family: 4, protocol: 'tcp', address: VIP, port: SERVICE_PORT })).map(describe);
    const twins: Record<string, string[]> = {};
    for (const service of await ipvs.listServices()) {
      if (service.key.fwmark !== undefined) twins[`0x${service.key.fwmark.toString(16)}`] = (await ipvs.listDestinations(service.key)).map(describe);
    }
    let pinnedPackets: number | null = null;
    const listing = await run('ip', ['netns', 'exec', this.live.netns(nodeName(node)), 'nft', '-j', 'list', 'tables', 'inet']);
    if (listing.includes('"conndrain"')) {
      const table = JSON.parse(await run('ip', ['netns', 'exec', this.live.netns(nodeName(node)), 'nft', '-j', 'list', 'table', 'inet', 'conndrain'])) as unknown;
      pinnedPackets = [...parsePinCounters(table).values()].reduce((sum, packets) => sum + packets, 0);
    }
    return { original, twins, pinnedPackets };
  }

  async stop(): Promise<void> {
    for (const handle of this.netlinks.values()) handle.close();
    this.netlinks.clear();
    await Promise.all([...this.processes, this.probe].map((process) => process.stop()));
    await Promise.all(this.agents.map((agent) => agent.stop()));
    await this.api.stop();
    await this.live.destroy();
  }
}
