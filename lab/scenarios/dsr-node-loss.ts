import { run } from '../sys/exec.js';
import { runSteps } from '../sys/script.js';
import type { TcpFailLine, TcpLine } from '../traffic/wire.js';
import { CLIENT_ADDRESS, nodeName } from '../topology/cluster.js';
import { installFlowCounters, readFlowCounters, type FlowCounters } from '../measure/flow-counters.js';
import { DsrCluster, VIP, type NodePinningState } from './dsr-cluster.js';
import { openPinnedFlow } from './dsr-flow.js';
import { nowMs, sleep } from './timeline.js';
import type { DrainDecision } from '../proxy/kube-router-ipvs.js';

export interface DsrNodeLossRun {
  conndrain: boolean;
  /** The stream kept being answered by its pod after node-2 went down, with no failure. */
  survived: boolean;
  /** Bytes the client wrote that its pod never acknowledged. */
  bytesLost: number;
  bytesWritten: number;
  /** First failure after node-2 went down (seconds), and its kind; null: none. */
  failureSeconds: number | null;
  failureKind: TcpFailLine['kind'] | null;
  failureDetail: string | null;
  /** Requests answered after node-2 went down, and by which pods. */
  answeredAfterLoss: number;
  answeredBy: string[];
  pod: string;
  proxyDecisions: Record<string, DrainDecision>;
  weightsBeforeLoss: Record<string, number | null>;
  /** New connections opened during the drain (through node-2 before its loss, node-1 after): how many reached which pod. */
  newConnections: { probed: number; answered: number; toDrainingPod: number; byPod: Record<string, number> };
  /** Flow pinning as the nodes held it (diagnostics): before the loss on node-1 and node-2, after it on node-1. */
  pinning: { beforeLoss: Record<string, NodePinningState>; afterLoss: NodePinningState };
  /** node-1 after the run: its IPVS connection entries (`ipvsadm -Lnc`) and its agent's IPVS and flowpin log lines (seconds after the loss). */
  node1: { connections: string[]; agentLog: string[] };
  /** IPVS services kube-router's stale cleanup deleted per node at the unready sync (conndrain's twins), re-created by the agents. */
  staleDeletedByProxy: Record<string, number>;
  /** With conndrain: seconds (after the proxy's sync + 2.5 s) until nodes 1-3 pinned the pod's flows (twin + nft table). */
  pinnedAfterSeconds: number | null;
  /** The stream's packets counted in node-1, the pod and the client: 2.5 s after the loss and at the end. */
  flowCounters: { at2500ms: Record<string, FlowCounters>; end: Record<string, FlowCounters> };
  /** The stream's socket on the client and on the pod (`ss -tnoi`), the client's route to the VIP: 2.5 s after the loss. */
  sockets: Record<string, string>;
}

async function socketsOf(cluster: DsrCluster, pod: string, port: number): Promise<Record<string, string>> {
  const ss = (ns: string): Promise<string> => run('ip', ['netns', 'exec', cluster.live.netns(ns), 'ss', '-tnoi', `( sport = :${port} or dport = :${port} )`]).catch((error: Error) => error.message);
  const [client, server, route] = await Promise.all([ss('client'), ss(pod), run('ip', ['-n', cluster.live.netns('client'), 'route', 'get', VIP, 'from', CLIENT_ADDRESS]).catch((error: Error) => error.message)]);
  return { client: client.trim(), [pod]: server.trim(), clientRoute: route.trim() };
}

function agentLines(cluster: DsrCluster, node: string, down: number): string[] {
  const agent = cluster.agents.find((candidate) => candidate.nodeName === node);
  if (agent === undefined) return [];
  return agent.logs
    .filter((line): line is { time: string; msg: string } => typeof line === 'object' && line !== null && typeof (line as { msg?: unknown }).msg === 'string' && /^(flowpin|ipvs)/.test((line as { msg: string }).msg))
    .map((line) => {
      const { time, msg, level: _level, pid: _pid, hostname: _hostname, component: _component, node: _node, ...rest } = line as Record<string, unknown> & { time: string; msg: string };
      return `${((Date.parse(time) - down) / 1000).toFixed(2)} s ${msg} ${JSON.stringify(rest)}`;
    })
    .slice(-40);
}

/** Source ports of the new connections probed during the drain (8 before the loss, 8 after). */
const NEW_PORTS_BEFORE = Array.from({ length: 8 }, (_, index) => 42000 + index);
const NEW_PORTS_AFTER = Array.from({ length: 8 }, (_, index) => 42100 + index);

function countPods(results: Map<number, string | null>, drained: string): RunFigures {
  const byPod: Record<string, number> = {};
  let answered = 0;
  for (const pod of results.values()) {
    if (pod === null) continue;
    answered += 1;
    byPod[pod] = (byPod[pod] ?? 0) + 1;
  }
  return { probed: results.size, answered, toDrainingPod: byPod[drained] ?? 0, byPod };
}

type RunFigures = DsrNodeLossRun['newConnections'];

function addFigures(a: RunFigures, b: RunFigures): RunFigures {
  const byPod: Record<string, number> = { ...a.byPod };
  for (const [pod, n] of Object.entries(b.byPod)) byPod[pod] = (byPod[pod] ?? 0) + n;
  return { probed: a.probed + b.probed, answered: a.answered + b.answered, toDrainingPod: a.toDrainingPod + b.toDrainingPod, byPod };
}

/**
 * The field's sequence: a long-lived TCP stream enters through node-2 (IPVS mh, tunnel,
 * sloppy_tcp=1) to a pod on node-1; the pod turns unready (still alive); node-2 goes down
 * and the client's next packets arrive at node-1. Does the stream survive?
 */
export async function runDsrNodeLossOnce(withConndrain: boolean, log: (message: string) => void, observeMs = 5000): Promise<DsrNodeLossRun> {
  const cluster = await DsrCluster.start(withConndrain, log);
  try {
    const flow = await openPinnedFlow(cluster);
    log(`dsr-node-loss: stream from port ${flow.port} through node-2 to ${flow.pod.name}; it turns unready`);
    await sleep(1500);
    const proxyDecisions = await cluster.makeUnready(flow.pod);
    await sleep(2500);
    // With conndrain: the loss comes once the agents have pinned the flows on the nodes it can
    // move to (a loss in the first moments of a drain, before the agents acted, is not covered).
    const pinnedAfter = withConndrain ? await cluster.waitPinned(flow.pod, [1, 2, 3], 60_000) : null;
    const weightsBeforeLoss = await cluster.weightsOf(flow.pod);
    // new connections during the drain, through the node the stream enters by (the route stays)
    const newBefore = countPods(await cluster.probeVia(2, NEW_PORTS_BEFORE, 2000), flow.pod.name);
    const beforeLoss = { 'node-1': await cluster.pinningState(1), 'node-2': await cluster.pinningState(2) };
    log(`dsr-node-loss: proxy ${JSON.stringify(proxyDecisions)}, held ${JSON.stringify(weightsBeforeLoss)}; node-2 goes down, the route moves to node-1`);
    const watched = { 'node-1': cluster.live.netns(nodeName(1)), [flow.pod.name]: cluster.live.netns(flow.pod.name), client: cluster.live.netns('client') };
    for (const netns of Object.values(watched)) await installFlowCounters(netns, CLIENT_ADDRESS, flow.port);
    const readAll = async (): Promise<Record<string, FlowCounters>> => Object.fromEntries(await Promise.all(Object.entries(watched).map(async ([name, netns]) => [name, await readFlowCounters(netns)] as const)));
    const down = nowMs();
    // one script: node-2 dies, then the route moves (every `ip` started from node is slow under TCG)
    await runSteps([['ip', '-n', cluster.live.netns(nodeName(2)), 'link', 'set', 'up0', 'down'], cluster.vipRouteStep(1)]);
    const early = sleep(2500).then(async () => ({ counters: await readAll(), sockets: await socketsOf(cluster, flow.pod.name, flow.port) }));
    const [newAfterResults, { counters: at2500ms, sockets }] = await Promise.all([cluster.probeVia(1, NEW_PORTS_AFTER, 2000), early, sleep(observeMs)]);
    const endCounters = await readAll();
    await flow.stream.stop();
    const newConnections = addFigures(newBefore, countPods(newAfterResults, flow.pod.name));
    const afterLoss = await cluster.pinningState(1);
    const connections = (await run('ip', ['netns', 'exec', cluster.live.netns(nodeName(1)), 'ipvsadm', '-Lnc'])).split('\n').filter((line) => line.includes(':')).slice(0, 40);
    const node1 = { connections, agentLog: agentLines(cluster, nodeName(1), down) };
    const lines = flow.stream.lines as { k?: string }[];
    const written = (lines.find((line) => line.k === 'written') as { bytes?: number } | undefined)?.bytes ?? 0;
    const answers = lines.filter((line): line is TcpLine => line.k === 't' && (line as TcpLine).ok);
    const acked = answers.at(-1)?.bytes ?? 0;
    const after = answers.filter((line) => line.t >= down);
    const failure = lines.find((line): line is TcpFailLine => line.k === 'tfail');
    const answeredBy = [...new Set(after.map((line) => line.pod ?? ''))];
    const survived = failure === undefined && after.length > 0 && answeredBy.every((pod) => pod === flow.pod.name) && (after.at(-1)?.t ?? 0) > down + observeMs - 1000;
    return {
      conndrain: withConndrain,
      survived,
      bytesLost: Math.max(0, written - acked),
      bytesWritten: written,
      failureSeconds: failure === undefined ? null : Math.round(failure.t - down) / 1000,
      failureKind: failure?.kind ?? null,
      failureDetail: failure?.detail ?? null,
      answeredAfterLoss: after.length,
      answeredBy,
      pod: flow.pod.name,
      proxyDecisions,
      weightsBeforeLoss,
      newConnections,
      pinning: { beforeLoss, afterLoss },
      node1,
      staleDeletedByProxy: { ...cluster.staleDeletedByProxy },
      pinnedAfterSeconds: pinnedAfter,
      flowCounters: { at2500ms, end: endCounters },
      sockets,
    };
  } finally {
    await cluster.stop();
  }
}
