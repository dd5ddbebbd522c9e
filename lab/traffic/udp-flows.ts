import { createSocket, type Socket } from 'node:dgram';
import type { ClientConfig } from './client-config.js';
import { emit, nowMs } from './wire.js';

type UdpConfig = NonNullable<ClientConfig['udp']>;

/**
 * DNS-like UDP flows, each on one fixed source port (a resolver or forwarder that keeps its
 * socket: the case where a conntrack entry outlives its pod). Every flow sends a query every
 * `intervalMs`; a query unanswered after `timeoutMs` is lost.
 */
export class UdpFlows {
  private readonly sockets: Socket[] = [];
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly pending = new Map<string, { timer: NodeJS.Timeout; t: number }>();
  private stopped = false;

  constructor(
    private readonly config: UdpConfig,
    private readonly bind: string,
    private readonly target: string,
  ) {}

  /** Opens flows until every pod carries `flowsPerPod` of them. */
  async open(pods: readonly string[]): Promise<void> {
    const counts = new Map(pods.map((pod) => [pod, 0]));
    const want = pods.length * this.config.flowsPerPod;
    for (let attempt = 0; this.sockets.length < want; attempt++) {
      if (attempt > 40 * want) throw new Error(`UDP: could not balance ${want} flows over ${pods.join(', ')}`);
      const socket = await this.connect();
      const pod = await this.probe(socket, this.sockets.length);
      const count = pod === undefined ? undefined : counts.get(pod);
      if (pod === undefined || count === undefined || count >= this.config.flowsPerPod) {
        socket.close();
        continue;
      }
      counts.set(pod, count + 1);
      const flow = this.sockets.length;
      this.sockets.push(socket);
      emit({ k: 'uflow', flow, port: socket.address().port, pod });
    }
  }

  start(): void {
    this.sockets.forEach((socket, flow) => {
      let seq = 0;
      socket.on('message', (message) => this.onAnswer(flow, message.toString('utf8')));
      this.timers.push(setInterval(() => this.send(socket, flow, ++seq), this.config.intervalMs));
    });
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.timers) clearInterval(timer);
    for (const { timer } of this.pending.values()) clearTimeout(timer);
    for (const socket of this.sockets) socket.close();
  }

  private connect(): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const socket = createSocket('udp4');
      socket.on('error', () => undefined);
      socket.bind({ address: this.bind, port: 0 }, () => {
        socket.connect(this.config.port, this.target, () => resolve(socket));
      });
      socket.once('error', reject);
    });
  }

  /** Sends probe queries until one is answered; resolves with the answering pod. */
  private async probe(socket: Socket, flow: number): Promise<string | undefined> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const answer = await new Promise<string | undefined>((resolve) => {
        const timer = setTimeout(() => {
          socket.off('message', onMessage);
          resolve(undefined);
        }, this.config.timeoutMs);
        const onMessage = (message: Buffer) => {
          clearTimeout(timer);
          socket.off('message', onMessage);
          resolve(message.toString('utf8').split(' ')[3]);
        };
        socket.on('message', onMessage);
        socket.send(`q ${flow} 0`);
      });
      if (answer !== undefined) return answer;
    }
    return undefined;
  }

  private send(socket: Socket, flow: number, seq: number): void {
    if (this.stopped) return;
    const t = nowMs();
    const key = `${flow}/${seq}`;
    const timer = setTimeout(() => {
      this.pending.delete(key);
      if (!this.stopped) emit({ k: 'u', flow, seq, t, ok: false });
    }, this.config.timeoutMs);
    this.pending.set(key, { timer, t });
    // a send error (EHOSTUNREACH after an ICMP) is counted as a loss when the timer fires
    socket.send(`q ${flow} ${seq}`, () => undefined);
  }

  private onAnswer(flow: number, text: string): void {
    const [kind, flowText, seqText, pod] = text.split(' ');
    if (kind !== 'a' || Number(flowText) !== flow || pod === undefined) return;
    const key = `${flow}/${seqText}`;
    const pending = this.pending.get(key);
    if (pending === undefined) return;
    clearTimeout(pending.timer);
    this.pending.delete(key);
    emit({ k: 'u', flow, seq: Number(seqText), t: pending.t, ok: true, pod });
  }
}
