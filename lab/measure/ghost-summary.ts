import type { TcpConnectLine, TcpFailLine, TcpLine, TrafficLine, UdpFlowLine, UdpLine } from '../traffic/wire.js';

/** The moment that matters (the pod's deletion) and the client's settings. */
export interface GhostEvent {
  /** When the pod was deleted (ms since the epoch). */
  t0: number;
  /** A query sent this long before t0 can still be lost because of the deletion. */
  udpTimeoutMs: number;
  tcpTimeoutMs: number;
}

export interface UdpSummary {
  /** Flows the dying pod carried / flows other pods carried. */
  affectedFlows: number;
  otherFlows: number;
  /** From the deletion until every affected flow is answered again (or until the window ends). */
  failureSeconds: number;
  /** False when some affected flow was still failing when the window ended. */
  recovered: boolean;
  /** Window length after the deletion (failureSeconds cannot exceed it). */
  windowSeconds: number;
  lostQueries: number;
  /** Of those, losses after the flow was answered again (not part of the ghost outage). */
  lostAfterRecovery: number;
  /** Lost queries of flows on other pods (must be 0: their flows are unaffected). */
  otherPodLostQueries: number;
  queriesAfterEvent: number;
}

export interface TcpSummary {
  affectedFlows: number;
  /** First failure of a stream on the dying pod, seconds after the deletion; null: none. */
  firstFailureSeconds: number | null;
  failureKind: TcpFailLine['kind'] | null;
  /** When every affected stream answered again on a new connection; null: not within the window. */
  recoveredSeconds: number | null;
  /** Bytes the pods acknowledged at the application level, all streams. */
  bytesDelivered: number;
  /** Failures of streams on other pods after the deletion (must be 0). */
  otherPodFailures: number;
}

const round = (value: number): number => Math.round(value * 1000) / 1000;

export function summarizeUdp(lines: readonly TrafficLine[], dying: ReadonlySet<string>, event: GhostEvent): UdpSummary {
  const flows = lines.filter((line): line is UdpFlowLine => line.k === 'uflow');
  const affected = new Set(flows.filter((flow) => dying.has(flow.pod)).map((flow) => flow.flow));
  const queries = lines.filter((line): line is UdpLine => line.k === 'u');
  const from = event.t0 - event.udpTimeoutMs;
  const end = Math.max(event.t0, ...queries.map((query) => query.t));
  let failureMs = 0;
  let recovered = true;
  let lostAfterRecovery = 0;
  for (const flow of affected) {
    const own = queries.filter((query) => query.flow === flow && query.t >= from).sort((a, b) => a.t - b.t);
    // the ghost outage is the run of losses that starts with the deletion; it ends at the
    // first answered query. Losses after that are a separate event (a starved CPU, a 250 ms
    // timeout missed) and are counted on their own, not stretched into the outage.
    const firstLost = own.findIndex((query) => !query.ok);
    if (firstLost < 0) continue;
    const answeredAfter = own.findIndex((query, index) => index > firstLost && query.ok);
    if (answeredAfter < 0) {
      recovered = false;
      failureMs = Math.max(failureMs, end - event.t0);
      continue;
    }
    failureMs = Math.max(failureMs, (own[answeredAfter] as UdpLine).t - event.t0);
    lostAfterRecovery += own.slice(answeredAfter).filter((query) => !query.ok).length;
  }
  const after = queries.filter((query) => query.t >= from);
  return {
    affectedFlows: affected.size,
    otherFlows: flows.length - affected.size,
    failureSeconds: round(Math.max(0, failureMs) / 1000),
    recovered,
    windowSeconds: round((end - event.t0) / 1000),
    lostQueries: after.filter((query) => !query.ok && affected.has(query.flow)).length,
    lostAfterRecovery,
    otherPodLostQueries: after.filter((query) => !query.ok && !affected.has(query.flow)).length,
    queriesAfterEvent: after.length,
  };
}

export function summarizeTcp(lines: readonly TrafficLine[], dying: ReadonlySet<string>, event: GhostEvent): TcpSummary {
  const firstPod = new Map<number, string>();
  let bytesDelivered = 0;
  const current = new Map<number, number>();
  for (const line of lines) {
    if (line.k === 'tconn') {
      if (!firstPod.has(line.flow)) firstPod.set(line.flow, line.pod);
      bytesDelivered += current.get(line.flow) ?? 0;
      current.set(line.flow, 0);
    }
    if (line.k === 't' && line.ok) current.set(line.flow, line.bytes ?? 0);
  }
  for (const bytes of current.values()) bytesDelivered += bytes;
  const affected = new Set([...firstPod].filter(([, pod]) => dying.has(pod)).map(([flow]) => flow));
  const from = event.t0 - event.tcpTimeoutMs;
  const failures = lines.filter((line): line is TcpFailLine => line.k === 'tfail' && line.t >= from);
  const affectedFailures = failures.filter((line) => affected.has(line.flow)).sort((a, b) => a.t - b.t);
  const first = affectedFailures[0];
  let recoveredMs: number | null = first === undefined ? 0 : -Infinity;
  if (first !== undefined) {
    for (const flow of affected) {
      const lastFail = affectedFailures.findLast((line) => line.flow === flow);
      if (lastFail === undefined) continue;
      const ok = lines.find((line): line is TcpLine => line.k === 't' && line.flow === flow && line.ok && line.t > lastFail.t);
      const reconnect = lines.find((line): line is TcpConnectLine => line.k === 'tconn' && line.flow === flow && line.t > lastFail.t);
      const back = ok?.t ?? reconnect?.t;
      if (back === undefined || recoveredMs === null) {
        recoveredMs = null;
        continue;
      }
      recoveredMs = Math.max(recoveredMs, back - event.t0);
    }
  }
  return {
    affectedFlows: affected.size,
    firstFailureSeconds: first === undefined ? null : round((first.t - event.t0) / 1000),
    failureKind: first?.kind ?? null,
    recoveredSeconds: recoveredMs === null ? null : round(Math.max(0, recoveredMs) / 1000),
    bytesDelivered,
    otherPodFailures: failures.filter((line) => !affected.has(line.flow)).length,
  };
}
