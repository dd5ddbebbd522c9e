import { nodeName } from '../topology/cluster.js';
import { DsrCluster, REAL_NODES, REFERENCE_NODE } from './dsr-cluster.js';
import { openPinnedFlow } from './dsr-flow.js';
import { sleep } from './timeline.js';
import type { DrainDecision } from '../proxy/kube-router-ipvs.js';

export interface MaglevDriftRun {
  conndrain: boolean;
  /** Sampled flows (source ports) whose pre-drain pod is not the drained one, answered on every node. */
  compared: number;
  /** Of those, flows the nodes do not agree on during the drain. */
  differing: number;
  /** Flows a node sends somewhere else than before the drain, per node. */
  movedPerNode: Record<string, number>;
  /** Sampled flows that mapped to the drained pod before (not compared). */
  toDrainedPod: number;
  /** New connections (sampled flows x real nodes) that reached the drained pod during the drain. */
  newToDrainedPod: number;
  /** Sampled flows some node did not answer at all. */
  unanswered: number;
  drainedPod: string;
  /** What each node's service proxy did with the unready endpoint, and what it holds afterwards. */
  proxyDecisions: Record<string, DrainDecision>;
  weightsDuringDrain: Record<string, number | null>;
}

const SAMPLE_PORTS = Array.from({ length: 160 }, (_, index) => 40000 + index);

/**
 * A pod drains while node-2 carries a flow to it: kube-router keeps it at weight 0 on node-2
 * and deletes it on node-1 and node-3. Then for a sample of new flows, which pod does each
 * node's `mh` table send them to? Compared with the reference node (the table before the
 * drain), only for flows that did not map to the drained pod.
 */
export async function runMaglevDriftOnce(withConndrain: boolean, log: (message: string) => void): Promise<MaglevDriftRun> {
  const cluster = await DsrCluster.start(withConndrain, log);
  try {
    const flow = await openPinnedFlow(cluster);
    log(`maglev-drift: node-2 carries a flow from port ${flow.port} to ${flow.pod.name}; it turns unready`);
    const proxyDecisions = await cluster.makeUnready(flow.pod);
    await sleep(2500);
    // with conndrain: measured once every agent holds the pod (a drain's first moments are not covered)
    if (withConndrain) await cluster.waitHeld(flow.pod, 60_000);
    const weightsDuringDrain = await cluster.weightsOf(flow.pod);
    await flow.stream.stop();
    log(`maglev-drift: proxy ${JSON.stringify(proxyDecisions)}, held ${JSON.stringify(weightsDuringDrain)}; probing ${SAMPLE_PORTS.length} flows on every node`);
    const reference = await cluster.probeVia(REFERENCE_NODE, SAMPLE_PORTS);
    const perNode = new Map<number, Map<number, string | null>>();
    for (const node of REAL_NODES) perNode.set(node, await cluster.probeVia(node, SAMPLE_PORTS));
    let compared = 0;
    let differing = 0;
    let toDrainedPod = 0;
    let unanswered = 0;
    let newToDrainedPod = 0;
    const movedPerNode: Record<string, number> = Object.fromEntries(REAL_NODES.map((node) => [nodeName(node), 0]));
    for (const port of SAMPLE_PORTS) {
      const before = reference.get(port) ?? null;
      const during = REAL_NODES.map((node) => perNode.get(node)?.get(port) ?? null);
      newToDrainedPod += during.filter((pod) => pod === flow.pod.name).length;
      if (before === null || during.includes(null)) {
        unanswered += 1;
        continue;
      }
      if (before === flow.pod.name) {
        toDrainedPod += 1;
        continue;
      }
      compared += 1;
      if (new Set(during).size > 1) differing += 1;
      REAL_NODES.forEach((node, index) => {
        if (during[index] !== before) movedPerNode[nodeName(node)] = (movedPerNode[nodeName(node)] ?? 0) + 1;
      });
    }
    return { conndrain: withConndrain, compared, differing, movedPerNode, toDrainedPod, newToDrainedPod, unanswered, drainedPod: flow.pod.name, proxyDecisions, weightsDuringDrain };
  } finally {
    await cluster.stop();
  }
}
