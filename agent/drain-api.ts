/**
 * The drain API for hook kind `agent`: `GET /v1/drain/<drain-id>` on the node's loopback.
 * Unknown id: 404 at once (the kubelet then proceeds). Otherwise the request is held open
 * until the drain ends and answered 200 with its JSON summary. At most `maxDrains` requests
 * are held at once (503 beyond, with Retry-After). A client that disconnects ends only its
 * own wait: the drain goes on for the others and for retries. On SIGTERM the agent stops
 * accepting (`stopAccepting`: the SO_REUSEPORT listener closes, a second agent on the port
 * takes new calls) and waits (`idle`) until every held call is answered (docs/handover.md).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { DRAIN_API_PREFIX } from '../src/contract.js';
import type { DrainSessions } from './drain-sessions.js';
import { closeListener, listen } from './health-server.js';

export interface DrainApiOptions {
  sessions: DrainSessions;
  maxDrains: number;
  logger: Logger;
  /** Called for every answered request (status) for metrics. */
  onAnswer?(status: number): void;
}

const DRAIN_ID = /^[A-Za-z0-9._-]{1,128}$/;

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.writableEnded || res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(`${JSON.stringify(body)}\n`);
}

export class DrainApi {
  readonly server: Server;
  private waiting = 0;
  private idleWaiters: Array<() => void> = [];

  constructor(private readonly options: DrainApiOptions) {
    this.server = createServer((req, res) => this.handle(req, res));
    // A drain can last an hour: never time the held request out on our side.
    this.server.requestTimeout = 0;
    this.server.headersTimeout = 10_000;
  }

  /** Requests held open right now. */
  get held(): number {
    return this.waiting;
  }

  /** `listenSocket`: a descriptor with SO_REUSEPORT for the zero-gap handover (agent.ts). */
  listen(port: number, host: string, listenSocket?: (host: string, port: number) => number): Promise<number> {
    return listen(this.server, port, host, listenSocket);
  }

  /**
   * Handover: no new connections (the listening socket closes, so the kernel sends them to the
   * other agent on the port); idle keep-alive connections close; held calls go on.
   */
  stopAccepting(): void {
    closeListener(this.server);
  }

  /** Resolves once no call is held open. */
  async idle(): Promise<void> {
    while (this.waiting > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private answer(res: ServerResponse, status: number, body: unknown, headers?: Record<string, string>): void {
    this.options.onAnswer?.(status);
    sendJson(res, status, body, headers);
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://agent');
    const prefix = `${DRAIN_API_PREFIX}/`;
    if (!url.pathname.startsWith(prefix)) {
      this.answer(res, 404, { error: `no such path; the drain API is GET ${DRAIN_API_PREFIX}/<drain-id>` });
      return;
    }
    if (req.method !== 'GET') {
      this.answer(res, 405, { error: 'only GET' }, { allow: 'GET' });
      return;
    }
    const drainId = decodeURIComponent(url.pathname.slice(prefix.length));
    const log = this.options.logger.child({ drainId });
    if (!DRAIN_ID.test(drainId)) {
      this.answer(res, 404, { error: 'not a drain id', drainId });
      return;
    }
    if (this.waiting >= this.options.maxDrains) {
      log.warn({ held: this.waiting, maxDrains: this.options.maxDrains }, 'drain API full: 503');
      this.answer(res, 503, { error: `too many drains held open (${this.options.maxDrains})`, drainId }, { 'retry-after': '1' });
      return;
    }
    const joined = this.options.sessions.join(drainId);
    if (joined.kind === 'unknown') {
      log.info('drain id not in the watch cache: 404');
      this.answer(res, 404, { error: 'unknown drain id (no managed pod carries it)', drainId });
      return;
    }
    this.waiting += 1;
    let open = true;
    const release = (): void => {
      if (!open) return;
      open = false;
      this.waiting -= 1;
      if (this.waiting === 0) for (const wake of this.idleWaiters.splice(0)) wake();
    };
    res.on('close', () => {
      if (open && !res.writableEnded) log.info('drain client went away; the drain goes on');
      release();
    });
    joined.done.then(
      (summary) => {
        if (!open) return;
        release();
        this.answer(res, 200, summary);
      },
      (error: unknown) => {
        log.error({ err: error }, 'drain failed');
        release();
        this.answer(res, 500, { error: 'drain failed', drainId });
      },
    );
  }
}
