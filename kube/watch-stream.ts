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
 */
import type { KubeConnection } from './connection.js';
import type { JsonMask } from './json-mask.js';
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
}

/** Splits a byte stream into lines (without the newline), each at most `max` bytes. */
export class LineSplitter {
  private parts: Buffer[] = [];
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
      const tail = chunk.subarray(from, nl);
      this.check(tail.length);
      const line = this.parts.length === 0 ? tail : Buffer.concat([...this.parts, tail]);
      this.parts = [];
      this.size = 0;
      from = nl + 1;
      if (line.length > 0) this.onLine(line);
    }
    if (from < chunk.length) {
      const rest = chunk.subarray(from);
      this.check(rest.length);
      this.parts.push(Buffer.from(rest)); // a copy: the chunk itself is not kept
      this.size += rest.length;
    }
  }

  private check(more: number): void {
    if (this.size + more > this.max) throw new Error(`watch: one event is larger than ${this.max} bytes`);
  }
}

/** Starts a watch of `path`; the returned controller's `abort()` ends it (then `onDone` is not called). */
export async function streamWatch(conn: KubeConnection, path: string, query: KubeQuery, onEvent: WatchEventHandler, onDone: (error: unknown) => void, options: WatchStreamOptions = {}): Promise<AbortController> {
  const { url, headers, agent, send } = await prepareRequest(conn, path, { ...query, watch: true });
  const controller = new AbortController();
  let finished = false;
  const finish = (error: unknown): void => {
    if (finished) return;
    finished = true;
    req.destroy();
    if (!controller.signal.aborted) onDone(error);
  };
  const idleMs = (typeof query.timeoutSeconds === 'number' ? query.timeoutSeconds * 1000 : 300_000) + IDLE_SLACK_MS;
  const req = send(url, { method: 'GET', headers, agent, timeout: idleMs }, (res) => {
    const code = res.statusCode ?? 0;
    if (code < 200 || code >= 300) {
      readErrorAnswer(res, code, `watch ${url.pathname}`, finish);
      return;
    }
    const { mask } = options;
    const lines = new LineSplitter((line) => {
      let event: { type?: unknown; object?: unknown };
      try {
        event = JSON.parse(mask === undefined ? line.toString('utf8') : mask.apply(line)) as { type?: unknown; object?: unknown };
      } catch {
        throw new Error(`watch ${url.pathname}: an event is not JSON: ${line.subarray(0, 100).toString('utf8')}`);
      }
      onEvent(typeof event.type === 'string' ? event.type : '', event.object);
    }, options.maxLineBytes ?? 16 * 1024 * 1024);
    res.on('data', (c: Buffer) => {
      if (finished) return;
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
  req.on('timeout', () => finish(new Error(`watch ${url.pathname}: no byte in ${idleMs} ms`)));
  req.on('error', finish);
  controller.signal.addEventListener('abort', () => finish(null), { once: true });
  req.end();
  return controller;
}
