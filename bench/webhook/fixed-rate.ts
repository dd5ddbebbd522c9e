/**
 * Open-loop fixed-rate load over keep-alive TLS: request i is due at start + i / rate,
 * whatever happened to the requests before it (the way the API server calls a webhook: pod
 * creations do not wait for each other). It replaces autocannon's `overallRate`, which is
 * not a fixed rate: each connection sends its per-second quota back to back as soon as a
 * 1-second interval ticks and then idles, so "500 req/s" is a burst of 500 at full speed
 * once a second; autocannon then records integer milliseconds and back-fills 1 ms steps
 * for every slower response (coordinated-omission correction with an expected interval of
 * ceil(1 / per-connection-rate) = 1 ms), which turns a single slow response into a tail.
 *
 * Due requests are sent from a 1 ms tick on the first idle connection of a pool. Two
 * latencies per request, both from hrtime at microsecond resolution, exact percentiles:
 *   service: first byte written -> last byte of the response read (the server's share, plus
 *            loopback and TLS on both ends);
 *   from due time: the instant the request was due -> last byte read. This adds the tick's
 *            lateness (up to ~1 ms, client side) and any wait for a free connection (when
 *            every connection is busy: the server is behind), so it never hides a stall.
 */
import { connect, type TLSSocket } from 'node:tls';

export interface FixedRateOptions {
  port: number;
  body: string;
  path?: string;
  /** Requests per second. */
  rate: number;
  seconds: number;
  /** Measured-free lead-in at the same rate (JIT, TLS sessions, buffers). */
  warmupSeconds?: number;
  /** Keep-alive TLS connections in the pool (idle ones are picked; none is ever pipelined). */
  connections?: number;
}

export interface LatencySummary {
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
}

export interface FixedRateResult {
  /** Requests measured (after the warm-up) and their achieved rate. */
  requests: number;
  requestsPerSecond: number;
  non2xx: number;
  errors: number;
  /** Milliseconds. */
  service: LatencySummary;
  fromDue: LatencySummary;
  /** Requests that found every connection busy and waited for one. */
  waitedForConnection: number;
}

interface Pending { due: bigint; measured: boolean }

class Connection {
  busy = false;
  private buffer: Buffer = Buffer.alloc(0);
  private sentAt = 0n;
  private current: Pending | undefined;
  constructor(
    private readonly socket: TLSSocket,
    private readonly request: Buffer,
    private readonly done: (pending: Pending, sentAt: bigint, status: number) => void,
    private readonly failed: (error: Error) => void,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (error: Error) => this.failed(error));
  }

  send(pending: Pending): void {
    this.busy = true;
    this.current = pending;
    this.sentAt = process.hrtime.bigint();
    this.socket.write(this.request);
  }

  close(): void {
    this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const headerEnd = this.buffer.indexOf('\r\n\r\n');
    if (headerEnd < 0) return;
    const head = this.buffer.subarray(0, headerEnd).toString('latin1');
    const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
    if (this.buffer.length < headerEnd + 4 + length) return;
    const status = Number(head.slice(9, 12));
    this.buffer = this.buffer.subarray(headerEnd + 4 + length);
    const pending = this.current;
    this.current = undefined;
    this.busy = false;
    if (pending !== undefined) this.done(pending, this.sentAt, status);
  }
}

function summary(valuesNs: number[]): LatencySummary {
  const sorted = Float64Array.from(valuesNs).sort();
  const at = (q: number): number => (sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0) / 1e6;
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99), p999: at(0.999), max: (sorted[sorted.length - 1] ?? 0) / 1e6 };
}

function open(port: number): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => resolve(socket));
    socket.once('error', reject);
  });
}

export async function fixedRate(options: FixedRateOptions): Promise<FixedRateResult> {
  const { port, body, rate, seconds } = options;
  const warmup = options.warmupSeconds ?? 2;
  const payload = Buffer.from(body);
  const request = Buffer.concat([
    Buffer.from(`POST ${options.path ?? '/mutate'} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: ${payload.length}\r\nConnection: keep-alive\r\n\r\n`),
    payload,
  ]);
  const service: number[] = [];
  const fromDue: number[] = [];
  let non2xx = 0;
  let errors = 0;
  let completed = 0;
  let waitedForConnection = 0;
  const queue: Pending[] = [];
  const sockets = await Promise.all(Array.from({ length: options.connections ?? 16 }, () => open(port)));
  const pool: Connection[] = [];
  const sendQueued = (): void => {
    for (const connection of pool) {
      if (queue.length === 0) return;
      if (!connection.busy) connection.send(queue.shift() as Pending);
    }
  };
  const onDone = (pending: Pending, sentAt: bigint, status: number): void => {
    const now = process.hrtime.bigint();
    completed++;
    if (pending.measured) {
      service.push(Number(now - sentAt));
      fromDue.push(Number(now - pending.due));
      if (status < 200 || status > 299) non2xx++;
    }
    sendQueued();
  };
  for (const socket of sockets) pool.push(new Connection(socket, request, onDone, () => { errors++; }));

  const total = Math.round((warmup + seconds) * rate);
  const warmupCount = Math.round(warmup * rate);
  const intervalNs = 1e9 / rate;
  const start = process.hrtime.bigint();
  let next = 0;
  await new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      const now = process.hrtime.bigint();
      while (next < total && start + BigInt(Math.round(next * intervalNs)) <= now) {
        const pending = { due: start + BigInt(Math.round(next * intervalNs)), measured: next >= warmupCount };
        next++;
        const idle = pool.find((c) => !c.busy);
        if (idle !== undefined && queue.length === 0) idle.send(pending);
        else {
          queue.push(pending);
          if (pending.measured) waitedForConnection++;
        }
      }
      if (next >= total && completed + errors >= total) {
        clearInterval(tick);
        resolve();
      }
    }, 1);
  });
  const elapsedSeconds = (Number(process.hrtime.bigint() - start) / 1e9) - warmup;
  for (const connection of pool) connection.close();
  return {
    requests: service.length,
    requestsPerSecond: service.length / elapsedSeconds,
    non2xx,
    errors,
    service: summary(service),
    fromDue: summary(fromDue),
    waitedForConnection,
  };
}
