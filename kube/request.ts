/**
 * One API request over a KubeConnection with node:http(s) (no fetch implementation loaded):
 * JSON in, JSON out. A non-2xx answer rejects with a `KubeRequestError` carrying the status
 * code (410 on an expired list continue token, 403 on missing RBAC...).
 */
import type { Agent as HttpAgent, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { request as httpRequest } from './node-http.js';
import { request as httpsRequest } from 'node:https';
import type { KubeConnection } from './connection.js';

export class KubeRequestError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
    this.name = 'KubeRequestError';
  }
}

const TIMEOUT_MS = 60_000;

function headerRecord(headers: unknown): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  if (headers === undefined || headers === null) return out;
  // A node-fetch Headers (the library's KubeConfig) or a plain record (LeanKubeConnection).
  const entries = typeof (headers as { entries?: unknown }).entries === 'function'
    ? [...(headers as { entries(): Iterable<[string, string]> }).entries()]
    : Object.entries(headers as Record<string, string>);
  for (const [k, v] of entries) out[k] = v;
  return out;
}

export type KubeQuery = Record<string, string | number | boolean | undefined>;

/** What one request over `conn` needs: the URL with its query, the credentials' headers (Accept: JSON), the TLS agent, http or https. */
export interface PreparedRequest {
  url: URL;
  headers: OutgoingHttpHeaders;
  agent: HttpAgent | undefined;
  send: typeof httpRequest;
}

export async function prepareRequest(conn: KubeConnection, path: string, query: KubeQuery): Promise<PreparedRequest> {
  const cluster = conn.getCurrentCluster();
  if (cluster === null) throw new Error('kubeconfig: no current cluster');
  const url = new URL(cluster.server + path);
  for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
  const opts = await conn.applyToFetchOptions({});
  const headers = headerRecord(opts.headers);
  headers.Accept = 'application/json';
  return { url, headers, agent: opts.agent as HttpAgent | undefined, send: url.protocol === 'https:' ? httpsRequest : httpRequest };
}

/** The API server's `message` from an error body, else the body's first 300 characters. */
export function errorMessage(text: string): string {
  try {
    const parsed = (JSON.parse(text) as { message?: unknown }).message;
    if (typeof parsed === 'string') return parsed;
  } catch {
    // not JSON: the text itself
  }
  return text.slice(0, 300);
}

/** How much of a non-2xx answer's body is kept for its message. */
const MAX_ERROR_BODY = 64 * 1024;

/**
 * Reads a non-2xx answer's body (bounded) and hands `done` the typed error that says what the
 * server answered: `<what>: HTTP <code>: <its message>`. A failing stream is handed on as is.
 */
export function readErrorAnswer(res: IncomingMessage, code: number, what: string, done: (error: unknown) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  res.on('data', (c: Buffer) => {
    if (size < MAX_ERROR_BODY) chunks.push(c);
    size += c.length;
  });
  res.on('error', done);
  res.on('end', () => done(new KubeRequestError(code, `${what}: HTTP ${code}: ${errorMessage(Buffer.concat(chunks).toString('utf8'))}`)));
}

export async function kubeRequest(conn: KubeConnection, method: 'GET' | 'POST', path: string, query: KubeQuery = {}, body?: unknown): Promise<unknown> {
  const { url, headers, agent, send } = await prepareRequest(conn, path, query);
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  if (payload !== undefined) {
    headers['Content-Type'] = 'application/json';
    headers['Content-Length'] = payload.length;
  }
  return new Promise((resolve, reject) => {
    const req = send(url, { method, headers, agent, timeout: TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const code = res.statusCode ?? 0;
        if (code < 200 || code >= 300) {
          reject(new KubeRequestError(code, `${method} ${url.pathname}: HTTP ${code}: ${errorMessage(text)}`));
          return;
        }
        try {
          resolve(text === '' ? undefined : JSON.parse(text));
        } catch (error) {
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      });
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${url.pathname}: no answer in ${TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}
