/**
 * The drain API for hook kind `agent`: `GET /v1/drain/<drain-id>` on the node's loopback.
 * A known id is held open until the drain ends and answered 200 with its JSON summary. An id
 * not known yet while the first pod list is not in is held until it is (at most
 * `unknownIdWaitMs`), then answered as usual. An id unknown after the first list is checked on a
 * fresh view (`refresh`: this node's pods listed again, retried while the API cannot answer,
 * within `unknownIdWaitMs`): a pod created during a watch gap is not in the watch's view, and a
 * 404 makes the hook cut the pod's connections at once. 404 only for an id still unknown then.
 * At most `maxDrains` requests are held at once (503 beyond, with Retry-After). A client that
 * disconnects ends only its own wait: the drain goes on for the others and for retries.
 *
 * Nothing a client sends ends the process: every request, whatever its target, method,
 * headers or body, gets a bounded JSON answer (malformed percent-encoding: 400 with a
 * sentence; a parse error of the HTTP itself: 400/431 from `clientError`); an exception in a
 * handler is logged and answered 500.
 *
 * On SIGTERM the agent stops accepting (`stopAccepting`: the SO_REUSEPORT listener closes, a
 * second agent on the port takes new calls) and waits (`idle`) until every held call is
 * answered (docs/handover.md).
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from '../../kube/node-http.js';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { DRAIN_API_PREFIX } from '../../src/contract.js';
import type { DrainSessions, JoinResult } from './drain-sessions.js';
import { bounded, parseDrainTarget } from './drain-request.js';
import type { SyncGate } from '../pods/sync-gate.js';
import { closeListener, listen } from '../runtime/index.js';

export interface DrainApiOptions {
  sessions: DrainSessions;
  maxDrains: number;
  logger: Logger;
  /** Open once the first complete pod list is in; absent: ids are judged at once. */
  synced?: SyncGate;
  /** Longest hold of an unknown id while `synced` is closed or `refresh` has not succeeded. */
  unknownIdWaitMs?: number;
  /** Lists this node's pods again (a consistent read); resolves whether that was applied. */
  refresh?: () => Promise<boolean>;
  /** Called for every answered request (status) for metrics. */
  onAnswer?(status: number): void;
}

/** Largest request head (request line + headers) accepted; beyond: 431. */
export const MAX_HEADER_BYTES = 16 * 1024;
const DEFAULT_UNKNOWN_ID_WAIT_MS = 30_000;

const REASONS: Record<number, string> = { 400: 'Bad Request', 405: 'Method Not Allowed', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' };

/** The raw HTTP answer written on a socket whose request Node could not parse. */
function rawAnswer(status: number, error: string): string {
  const body = `${JSON.stringify({ error })}\n`;
  return `HTTP/1.1 ${status} ${REASONS[status] ?? 'Error'}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`;
}

function clientErrorStatus(code: string | undefined): number {
  if (code === 'HPE_HEADER_OVERFLOW') return 431;
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT' || code === 'ERR_HTTP_HEADERS_TIMEOUT') return 408;
  return 400;
}

export class DrainApi {
  readonly server: Server;
  private waiting = 0;
  /** Closed: a refresh loop ends (no timer outlives the agent). */
  private closed = false;
  /** Sockets with a held request: a parse error of a request pipelined behind it only closes the socket. */
  private readonly holding = new WeakSet<Socket>();
  private idleWaiters: Array<() => void> = [];

  constructor(private readonly options: DrainApiOptions) {
    // No Host requirement: Node would answer a request without one with an empty 400 of its own.
    this.server = createServer({ maxHeaderSize: MAX_HEADER_BYTES, requireHostHeader: false }, (req, res) => this.handle(req, res));
    // A drain can last an hour: never time the held request out on our side.
    this.server.requestTimeout = 0;
    this.server.headersTimeout = 10_000;
    this.server.on('clientError', (error: Error & { code?: string }, socket: Socket) => this.onClientError(error, socket));
    // Without a listener Node answers an Expect other than 100-continue itself: a 417 with an
    // empty chunked body on a kept-alive connection, not the API's JSON.
    this.server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) =>
      this.answer(req, res, 417, { error: `Expect: ${bounded(String(req.headers.expect))} is not supported; the drain API is GET /v1/drain/<drain-id>` }),
    );
    // Without a listener Node closes a CONNECT's connection with no answer.
    this.server.on('connect', (_req: IncomingMessage, socket: Socket) => this.answerRaw(socket, 405, 'CONNECT is not supported; the drain API is GET /v1/drain/<drain-id>'));
    // After listen: an accept failure (EMFILE) must be logged, not thrown.
    this.server.on('error', (error) => this.options.logger.error({ err: error }, 'drain API server error'));
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
    this.closed = true;
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private onClientError(error: Error & { code?: string }, socket: Socket): void {
    if (error.code === 'ECONNRESET' || !socket.writable || this.holding.has(socket)) {
      socket.destroy();
      return;
    }
    const status = clientErrorStatus(error.code);
    this.options.logger.debug({ code: error.code, status }, 'drain API: unparseable request');
    const why = status === 431 ? `request head larger than ${MAX_HEADER_BYTES} bytes` : status === 408 ? 'request head not received in time' : `not a valid HTTP/1.1 request (${error.code ?? 'parse error'})`;
    this.answerRaw(socket, status, why);
  }

  /** An answer written straight on the socket (no ServerResponse exists), then the connection closes. */
  private answerRaw(socket: Socket, status: number, why: string): void {
    this.options.onAnswer?.(status);
    if (socket.writable) socket.end(rawAnswer(status, why));
    else socket.destroy();
  }

  /** Lists this node's pods again, retrying while the API cannot answer, for at most `waitMs`. */
  private async refreshed(refresh: () => Promise<boolean>, waitMs: number, log: Logger): Promise<boolean> {
    log.info({ waitMs }, 'drain id not in the watch cache: listing this node\'s pods again before answering');
    const deadline = performance.now() + waitMs;
    while (!this.closed) {
      const left = deadline - performance.now();
      if (left <= 0) break;
      let timer: NodeJS.Timeout | undefined;
      const applied = await Promise.race([refresh(), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), left).unref()))]);
      clearTimeout(timer);
      if (applied) return true;
      const pause = Math.min(500, deadline - performance.now());
      if (pause > 0) await new Promise((r) => setTimeout(r, pause).unref());
    }
    log.warn({ waitMs }, 'this node\'s pods could not be listed again: 503');
    return false;
  }

  private answer(_req: IncomingMessage, res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    if (res.headersSent || res.writableEnded || res.destroyed) return;
    this.options.onAnswer?.(status);
    // Every answer closes its connection: a drain call is one request per pod, so keep-alive
    // saves nothing, and an idle kept-alive connection is what a handover would have to close
    // under a client that is just reusing it (that client would see a reset). A request that declared
    // a body must close anyway (the body is never read).
    const extra: Record<string, string> = { connection: 'close' };
    const text = `${JSON.stringify(body)}\n`;
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), 'cache-control': 'no-store', ...extra, ...headers });
    res.end(text);
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    try {
      this.route(req, res);
    } catch (error) {
      this.fail(req, res, error);
    }
  }

  private fail(req: IncomingMessage, res: ServerResponse, error: unknown): void {
    this.options.logger.error({ err: error, method: req.method, target: req.url?.slice(0, 128) }, 'drain API handler failed: 500');
    try {
      this.answer(req, res, 500, { error: 'internal error in the drain API (logged on the agent)' });
    } catch {
      res.destroy();
    }
  }

  private route(req: IncomingMessage, res: ServerResponse): void {
    const target = parseDrainTarget(req.url);
    if (target.kind === 'bad') {
      this.answer(req, res, 400, { error: target.why });
      return;
    }
    if (target.kind === 'other-path') {
      this.answer(req, res, 404, { error: `no such path; the drain API is GET ${DRAIN_API_PREFIX}/<drain-id>`, path: target.path });
      return;
    }
    if (req.method !== 'GET') {
      this.answer(req, res, 405, { error: 'only GET' }, { allow: 'GET' });
      return;
    }
    if (target.kind === 'not-a-drain-id') {
      this.answer(req, res, 404, { error: 'not a drain id (1-128 of A-Z a-z 0-9 . _ -)', drainId: target.text });
      return;
    }
    const { drainId } = target;
    const log = this.options.logger.child({ drainId });
    if (this.waiting >= this.options.maxDrains) {
      log.warn({ held: this.waiting, maxDrains: this.options.maxDrains }, 'drain API full: 503');
      this.answer(req, res, 503, { error: `too many drains held open (${this.options.maxDrains})`, drainId }, { 'retry-after': '1' });
      return;
    }
    this.hold(req, res, drainId, log).catch((error: unknown) => this.fail(req, res, error));
  }

  /** Holds the request until its drain ends (or, for an id not known yet, until the first pod list). */
  private async hold(req: IncomingMessage, res: ServerResponse, drainId: string, log: Logger): Promise<void> {
    this.waiting += 1;
    this.holding.add(req.socket);
    let open = true;
    const release = (): void => {
      if (!open) return;
      open = false;
      this.waiting -= 1;
      this.holding.delete(req.socket);
      if (this.waiting === 0) for (const wake of this.idleWaiters.splice(0)) wake();
    };
    res.on('close', () => {
      if (open && !res.writableEnded) log.info('drain client went away; the drain goes on');
      release();
    });
    try {
      let joined: JoinResult = this.options.sessions.join(drainId);
      const gate = this.options.synced;
      if (joined.kind === 'unknown' && gate !== undefined && !gate.isOpen) {
        const waitMs = this.options.unknownIdWaitMs ?? DEFAULT_UNKNOWN_ID_WAIT_MS;
        log.info({ waitMs }, 'drain id not known yet and the first pod list is not in: held until it is');
        const synced = await gate.wait(waitMs);
        if (!open) return;
        if (!synced) {
          log.warn({ waitMs }, 'first pod list still not in: 503');
          release();
          this.answer(req, res, 503, { error: `the agent has not received its first pod list after ${waitMs} ms; cannot tell whether this drain id is known`, drainId }, { 'retry-after': '1' });
          return;
        }
        joined = this.options.sessions.join(drainId);
      }
      if (joined.kind === 'unknown' && this.options.refresh !== undefined) {
        const fresh = await this.refreshed(this.options.refresh, this.options.unknownIdWaitMs ?? DEFAULT_UNKNOWN_ID_WAIT_MS, log);
        if (!open) return;
        if (!fresh) {
          release();
          this.answer(req, res, 503, { error: 'this node\'s pods could not be listed again; cannot tell whether this drain id is known', drainId }, { 'retry-after': '1' });
          return;
        }
        joined = this.options.sessions.join(drainId);
      }
      if (joined.kind === 'unknown') {
        log.info('drain id not in the watch cache: 404');
        release();
        this.answer(req, res, 404, { error: 'unknown drain id (no managed pod carries it)', drainId });
        return;
      }
      const summary = await joined.done;
      if (!open) return;
      release();
      this.answer(req, res, 200, summary);
    } catch (error) {
      release();
      log.error({ err: error }, 'drain failed');
      this.answer(req, res, 500, { error: 'drain failed', drainId });
    }
  }
}
