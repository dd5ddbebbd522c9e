/**
 * One watch request (`?watch=true`) over a KubeConnection with node:http(s): the body is a
 * stream of JSON lines (`{"type":..,"object":..}`), each handed to `onEvent` as soon as its
 * newline arrived. `onDone` is called once: `null` when the server ended the stream (its
 * `timeoutSeconds`), else the error (a non-2xx answer carries its `statusCode`, 410 included).
 *
 * Why not `@kubernetes/client-node`'s `Watch`: it loads node-fetch and whatwg-url (RSS on
 * every node: docs/design/agent.md, docs/scale.md), and turns every chunk into a string
 * before splitting lines. Here lines are split as bytes and decoded once each.
 *
 * Bounded: a line over `maxLineBytes` or one that is not JSON ends the watch with a clear
 * error (the list/watch restarts from its last resourceVersion with backoff).
 *
 * With `protobuf`, the watch asks for protobuf first (`Accept: application/vnd.kubernetes.protobuf,
 * application/json`, as a kube-proxy does): an API server answers built-in kinds as
 * length-framed protobuf (about half the bytes of JSON for an EndpointSlice, bench/slice-bytes),
 * decoded by kube/protobuf/; whatever the server answers with (its Content-Type) is read. A frame
 * that does not decode ends the watch with a ProtobufError.
 */
import type { KubeConnection } from './connection.js';
import type { JsonMask } from './json-mask.js';
import { FrameSplitter } from './protobuf/frames.js';
import { readWatchEvent } from './protobuf/watch-event.js';
import { prepareRequest, readErrorAnswer, type KubeQuery } from './request.js';

const NEWLINE = 0x0a;
/** No byte for this long (bookmarks arrive about every minute on a real server) ends the watch. */
const IDLE_SLACK_MS = 60_000;
const KEEPALIVE_MS = 30_000;

export interface WatchEventHandler {
  (type: string, object: unknown): void;
}

export interface WatchStreamOptions {
  maxLineBytes?: number;
  /** Applied to each event line before JSON.parse (a mask of `{type, object}`): only what is read is built. */
  mask?: JsonMask;
  /** Ask for protobuf first (kinds kube/protobuf/ decodes: EndpointSlice). */
  protobuf?: boolean;
  /** No byte for this long ends the watch (by default the query's `timeoutSeconds`, or 5 minutes, plus a minute). */
  idleMs?: number;
}

const PROTOBUF = 'application/vnd.kubernetes.protobuf';

/** A partial line buffer larger than this is let go once its line is out (a rare huge event is not kept for the watch's life). */
const KEEP_BUFFER_BYTES = 1 << 20;

/**
 * Splits a byte stream into lines (without the newline), each at most `max` bytes. A line
 * that spans chunks is gathered in one buffer reused from line to line (a watch event often
 * spans two 64 KB reads: no copy of its start and no concatenation allocated per event).
 * The Buffer handed to `onLine` is valid only during the call.
 */
export class LineSplitter {
  private pending: Buffer = Buffer.alloc(0);
  private size = 0;

  constructor(
    private readonly onLine: (line: Buffer) => void,
    private readonly max: number,
  ) {}

  write(chunk: Buffer): void {
    let from = 0;
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, from);
      if (nl < 0) break;
      let line: Buffer;
      if (this.size === 0) {
        this.check(nl - from);
        line = chunk.subarray(from, nl);
      } else {
        this.append(chunk, from, nl);
        line = this.pending.subarray(0, this.size);
        this.size = 0;
      }
      from = nl + 1;
      try {
        if (line.length > 0) this.onLine(line);
      } finally {
        if (this.pending.length > KEEP_BUFFER_BYTES) this.pending = Buffer.alloc(0);
      }
    }
    if (from < chunk.length) this.append(chunk, from, chunk.length);
  }

  /** Adds chunk[from, to) to the partial line (the chunk itself is not kept). */
  private append(chunk: Buffer, from: number, to: number): void {
    const need = this.size + (to - from);
    this.check(need - this.size);
    if (need > this.pending.length) {
      const grown = Buffer.allocUnsafe(Math.min(this.max, Math.max(need, this.pending.length * 2, 64 * 1024)));
      this.pending.copy(grown, 0, 0, this.size);
      this.pending = grown;
    }
    chunk.copy(this.pending, this.size, from, to);
    this.size = need;
  }

  private check(more: number): void {
    if (this.size + more > this.max) throw new Error(`watch: one event is larger than ${this.max} bytes`);
  }
}

/** Starts a watch of `path`; the returned controller's `abort()` ends it (then `onDone` is not called). */
export async function streamWatch(conn: KubeConnection, path: string, query: KubeQuery, onEvent: WatchEventHandler, onDone: (error: unknown) => void, options: WatchStreamOptions = {}): Promise<AbortController> {
  const { url, headers, agent, send } = await prepareRequest(conn, path, { ...query, watch: true });
  if (options.protobuf === true) headers.Accept = `${PROTOBUF}, application/json`;
  const controller = new AbortController();
  let finished = false;
  const idleMs = options.idleMs ?? (typeof query.timeoutSeconds === 'number' ? query.timeoutSeconds * 1000 : 300_000) + IDLE_SLACK_MS;
  // Not the socket's timeout: node refreshes that timer on every read (a timer-list insert per
  // chunk, at hundreds of watch events a second); here a read stores a time, one timer looks.
  let lastByteAt = Date.now();
  let idleTimer: ReturnType<typeof setTimeout> | undefined;
  const finish = (error: unknown): void => {
    if (finished) return;
    finished = true;
    clearTimeout(idleTimer);
    req.destroy();
    if (!controller.signal.aborted) onDone(error);
  };
  const watchIdle = (): void => {
    const quietMs = Date.now() - lastByteAt;
    if (quietMs >= idleMs) {
      finish(new Error(`watch ${url.pathname}: no byte in ${idleMs} ms`));
      return;
    }
    idleTimer = setTimeout(watchIdle, idleMs - quietMs);
    idleTimer.unref();
  };
  const req = send(url, { method: 'GET', headers, agent }, (res) => {
    lastByteAt = Date.now();
    const code = res.statusCode ?? 0;
    if (code < 200 || code >= 300) {
      readErrorAnswer(res, code, `watch ${url.pathname}`, finish);
      return;
    }
    const { mask } = options;
    const maxBytes = options.maxLineBytes ?? 16 * 1024 * 1024;
    const lines = String(res.headers['content-type'] ?? '').startsWith(PROTOBUF) ? new FrameSplitter((frame) => {
      const event = readWatchEvent(frame);
      onEvent(event.type, event.object);
    }, maxBytes) : new LineSplitter((line) => {
      let event: { type?: unknown; object?: unknown };
      try {
        event = JSON.parse(mask === undefined ? line.toString('utf8') : mask.apply(line)) as { type?: unknown; object?: unknown };
      } catch {
        throw new Error(`watch ${url.pathname}: an event is not JSON: ${line.subarray(0, 100).toString('utf8')}`);
      }
      onEvent(typeof event.type === 'string' ? event.type : '', event.object);
    }, maxBytes);
    res.on('data', (c: Buffer) => {
      if (finished) return;
      lastByteAt = Date.now();
      try {
        lines.write(c);
      } catch (error) {
        finish(error);
      }
    });
    res.on('error', finish);
    res.on('end', () => finish(null));
    res.on('close', () => finish(null));
  });
  req.on('socket', (socket) => socket.setKeepAlive(true, KEEPALIVE_MS));
  req.on('error', finish);
  watchIdle();
  controller.signal.addEventListener('abort', () => finish(null), { once: true });
  req.end();
  return controller;
}
