/**
 * One list request whose body is decoded as it arrives (list-decoder.ts): each item is handed
 * to `onItem` at once, so the caller projects it and the raw object is garbage right away.
 * A non-2xx answer rejects with a KubeRequestError carrying the status code (its body read
 * up to 64 KB for the message).
 */
import { request as httpRequest, type Agent as HttpAgent, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { KubeConnection } from './connection.js';
import { ListDecoder, type ListMetadata } from './list-decoder.js';
import { KubeRequestError } from './request.js';

const TIMEOUT_MS = 120_000;
const MAX_ERROR_BODY = 64 * 1024;

export type ListQuery = Record<string, string | number | boolean | undefined>;

function headerRecord(headers: unknown): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  if (headers === undefined || headers === null) return out;
  const entries = typeof (headers as { entries?: unknown }).entries === 'function'
    ? [...(headers as { entries(): Iterable<[string, string]> }).entries()]
    : Object.entries(headers as Record<string, string>);
  for (const [k, v] of entries) out[k] = v;
  return out;
}

function errorMessage(text: string): string {
  try {
    const parsed = (JSON.parse(text) as { message?: unknown }).message;
    if (typeof parsed === 'string') return parsed;
  } catch {
    // not JSON: the text itself
  }
  return text.slice(0, 300);
}

/** GETs `path` and streams its `items` to `onItem`; resolves with the list's metadata. */
export async function streamList(conn: KubeConnection, path: string, query: ListQuery, onItem: (item: unknown) => void): Promise<ListMetadata> {
  const cluster = conn.getCurrentCluster();
  if (cluster === null) throw new Error('kubeconfig: no current cluster');
  const url = new URL(cluster.server + path);
  for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
  const opts = await conn.applyToFetchOptions({});
  const headers = headerRecord(opts.headers);
  headers.Accept = 'application/json';
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(url, { method: 'GET', headers, agent: opts.agent as HttpAgent | undefined, timeout: TIMEOUT_MS }, (res) => {
      const code = res.statusCode ?? 0;
      if (code < 200 || code >= 300) {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          if (size < MAX_ERROR_BODY) chunks.push(c);
          size += c.length;
        });
        res.on('error', reject);
        res.on('end', () => reject(new KubeRequestError(code, `GET ${url.pathname}: HTTP ${code}: ${errorMessage(Buffer.concat(chunks).toString('utf8'))}`)));
        return;
      }
      const decoder = new ListDecoder(onItem);
      let failed = false;
      res.on('data', (c: Buffer) => {
        if (failed) return;
        try {
          decoder.write(c);
        } catch (error) {
          failed = true;
          req.destroy();
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      });
      res.on('error', (error) => {
        if (!failed) reject(error);
      });
      res.on('end', () => {
        if (failed) return;
        try {
          resolve(decoder.end());
        } catch (error) {
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      });
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url.pathname}: no answer in ${TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end();
  });
}
