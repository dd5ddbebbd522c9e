import { run } from '../sys/exec.js';
import type { TcpFailLine, TcpLine } from '../traffic/wire.js';
import { nodeName } from '../topology/cluster.js';
import { DsrCluster } from './dsr-cluster.js';
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
    const weightsBeforeLoss = await cluster.weightsOf(flow.pod);
    log(`dsr-node-loss: proxy ${JSON.stringify(proxyDecisions)}, held ${JSON.stringify(weightsBeforeLoss)}; node-2 goes down, the route moves to node-1`);
    const down = nowMs();
    await run('ip', ['-n', cluster.live.netns(nodeName(2)), 'link', 'set', 'up0', 'down']);
    await cluster.routeVipVia(1);
    await sleep(observeMs);
    await flow.stream.stop();
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
    };
  } finally {
    await cluster.stop();
  }
}
