import { connect, type Socket } from 'node:net';
import type { ClientConfig } from './client-config.js';
import { emit, nowMs, type TcpFailLine } from './wire.js';

type TcpConfig = NonNullable<ClientConfig['tcp']>;

function failKind(error: NodeJS.ErrnoException | undefined): TcpFailLine['kind'] {
  switch (error?.code) {
    case undefined:
      return 'closed';
    case 'ECONNRESET':
    case 'EPIPE':
      return 'reset';
    case 'ECONNREFUSED':
      return 'refused';
    case 'ETIMEDOUT':
      return 'timeout';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'unreachable';
    default:
      return 'other';
  }
}

/** One connection and its line protocol. Resolves `answer()` per request. */
export class Connection {
  private buffered = '';
  private waiting: ((line: string | Error) => void) | undefined;
  /** Why the connection ended (a peer's FIN or RST, an error), once it has. */
  private ended: Error | undefined;
  readonly socket: Socket;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => {
      this.buffered += chunk.toString('utf8');
      const newline = this.buffered.indexOf('\n');
      if (newline < 0) return;
      const line = this.buffered.slice(0, newline);
      this.buffered = this.buffered.slice(newline + 1);
      this.settle(line);
    });
    socket.on('error', (error) => {
      this.ended ??= error;
      this.settle(error);
    });
    socket.on('close', () => {
      this.ended ??= new Error('closed');
      this.settle(this.ended);
    });
  }

  static open(bind: string, target: string, port: number, timeoutMs: number, localPort?: number): Promise<Connection> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: target, port, localAddress: bind, ...(localPort === undefined ? {} : { localPort }) });
      const timer = setTimeout(() => {
        socket.destroy();
        reject(Object.assign(new Error('connect timeout'), { code: 'ETIMEDOUT' }));
      }, timeoutMs);
      socket.once('connect', () => {
        clearTimeout(timer);
        resolve(new Connection(socket));
      });
      socket.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
  }

  /** Sends one request and waits for its answer line (or the connection's failure, or the timeout). */
  request(seq: number, padding: string, timeoutMs: number): Promise<string> {
    if (this.ended !== undefined) return Promise.reject(this.ended);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting = undefined;
        reject(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: 'ETIMEDOUT' }));
      }, timeoutMs);
      this.waiting = (line) => {
        clearTimeout(timer);
        if (line instanceof Error) reject(line);
        else resolve(line);
      };
      this.socket.write(`r ${seq} ${padding}\n`);
    });
  }

  private settle(value: string | Error): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.(value);
  }
}

/**
 * Long-lived TCP request streams (a keep-alive HTTP or gRPC client): one request of
 * `payloadBytes` every `intervalMs` on the same connection. No answer within `timeoutMs` is
 * the app's own timeout; a failure is reported, then the client reconnects.
 */
export class TcpFlows {
  private stopped = false;
  private readonly connections: (Connection | undefined)[] = [];
  private readonly padding: string;

  constructor(
    private readonly config: TcpConfig,
    private readonly bind: string,
    private readonly target: string,
  ) {
    this.padding = 'x'.repeat(Math.max(0, config.payloadBytes - 16));
  }

  async open(pods: readonly string[]): Promise<void> {
    const counts = new Map(pods.map((pod) => [pod, 0]));
    const want = pods.length * this.config.flowsPerPod;
    for (let attempt = 0; this.connections.length < want; attempt++) {
      if (attempt > 40 * want) throw new Error(`TCP: could not balance ${want} connections over ${pods.join(', ')}`);
      const connection = await Connection.open(this.bind, this.target, this.config.port, this.config.timeoutMs).catch(() => undefined);
      if (connection === undefined) continue;
      const pod = await connection.request(0, '', this.config.timeoutMs).then((line) => line.split(' ')[2]).catch(() => undefined);
      const count = pod === undefined ? undefined : counts.get(pod);
      if (pod === undefined || count === undefined || count >= this.config.flowsPerPod) {
        connection.socket.destroy();
        continue;
      }
      counts.set(pod, count + 1);
      emit({ k: 'tconn', flow: this.connections.length, t: nowMs(), pod, port: connection.socket.localPort ?? 0 });
      this.connections.push(connection);
    }
  }

  start(): void {
    this.connections.forEach((_, flow) => void this.loop(flow));
  }

  stop(): void {
    this.stopped = true;
    for (const connection of this.connections) connection?.socket.destroy();
  }

  private async loop(flow: number): Promise<void> {
    let seq = 0;
    while (!this.stopped) {
      const started = nowMs();
      const connection = this.connections[flow] ?? (await this.reconnect(flow));
      if (connection !== undefined) {
        seq += 1;
        try {
          const [, , pod, bytes] = (await connection.request(seq, this.padding, this.config.timeoutMs)).split(' ');
          if (!this.stopped) emit({ k: 't', flow, seq, t: started, ok: true, pod: pod ?? '', bytes: Number(bytes) });
        } catch (error) {
          if (this.stopped) return;
          emit({ k: 't', flow, seq, t: started, ok: false });
          const errno = error as NodeJS.ErrnoException;
          emit({ k: 'tfail', flow, t: nowMs(), kind: errno.message === 'closed' ? 'closed' : failKind(errno), detail: errno.message });
          connection.socket.destroy();
          this.connections[flow] = undefined;
        }
      }
      const wait = this.config.intervalMs - (nowMs() - started);
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }

  private async reconnect(flow: number): Promise<Connection | undefined> {
    try {
      const connection = await Connection.open(this.bind, this.target, this.config.port, this.config.timeoutMs);
      if (this.stopped) {
        connection.socket.destroy();
        return undefined;
      }
      const pod = (await connection.request(0, '', this.config.timeoutMs)).split(' ')[2] ?? '';
      emit({ k: 'tconn', flow, t: nowMs(), pod, port: connection.socket.localPort ?? 0 });
      this.connections[flow] = connection;
      return connection;
    } catch (error) {
      if (!this.stopped) emit({ k: 'tfail', flow, t: nowMs(), kind: failKind(error as NodeJS.ErrnoException), detail: (error as Error).message });
      return undefined;
    }
  }
}
