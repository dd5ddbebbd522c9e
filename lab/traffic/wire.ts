/**
 * What the lab's traffic processes say to each other and to the lab, kept in one place.
 * UDP: request `q <flow> <seq>`, answer `a <flow> <seq> <pod>`.
 * TCP: request line `r <seq> <padding>`, answer line `a <seq> <pod> <bytes received on this connection>`.
 * Processes report to the lab as JSON lines on stdout (the types below).
 */

export interface ReadyLine {
  k: 'ready';
  pod?: string;
}

/** One UDP query's outcome. `t` is when it was sent (ms since the epoch, sub-ms precision). */
export interface UdpLine {
  k: 'u';
  flow: number;
  seq: number;
  t: number;
  ok: boolean;
  /** Which pod answered (only when ok). */
  pod?: string;
}

/** A UDP flow is set up: its fixed source port and the pod it was balanced to. */
export interface UdpFlowLine {
  k: 'uflow';
  flow: number;
  port: number;
  pod: string;
}

/** One TCP request on a long-lived connection. */
export interface TcpLine {
  k: 't';
  flow: number;
  seq: number;
  t: number;
  ok: boolean;
  pod?: string;
  bytes?: number;
}

/** A TCP connection (re)established: which pod it reached. */
export interface TcpConnectLine {
  k: 'tconn';
  flow: number;
  t: number;
  pod: string;
  port: number;
}

/** A TCP connection failed: reset by a peer, refused, or no answer within the app's timeout. */
export interface TcpFailLine {
  k: 'tfail';
  flow: number;
  t: number;
  kind: 'reset' | 'refused' | 'timeout' | 'unreachable' | 'closed' | 'other';
  detail: string;
}

export type TrafficLine = ReadyLine | UdpLine | UdpFlowLine | TcpLine | TcpConnectLine | TcpFailLine;

/** Wall-clock milliseconds with sub-millisecond precision, comparable across processes. */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

export function emit(line: TrafficLine): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}
