/**
 * One list request whose body is decoded as it arrives (list-decoder.ts): each item is handed
 * to `onItem` at once, so the caller projects it and the raw object is garbage right away.
 * A non-2xx answer rejects with a KubeRequestError carrying the status code (its body read
 * up to 64 KB for the message).
 *
 * Asks for gzip, as client-go's transport does: the API server compresses a list over 128 KiB
 * (APIResponseCompression), ~7 times fewer bytes for the cluster's EndpointSlices
 * (bench/slice-bytes); the body is inflated as it arrives, so the memory bound stays one chunk.
 */
import { createGunzip } from 'node:zlib';
import type { KubeConnection } from './connection.js';
import type { JsonMask } from './json-mask.js';
import { ListDecoder, type ListMetadata } from './list-decoder.js';
import { prepareRequest, readErrorAnswer, type KubeQuery } from './request.js';

const TIMEOUT_MS = 120_000;

export type ListQuery = KubeQuery;

/** GETs `path` and streams its `items` to `onItem` (each masked with `itemMask` when given); resolves with the list's metadata. */
export async function streamList(conn: KubeConnection, path: string, query: ListQuery, onItem: (item: unknown) => void, itemMask?: JsonMask): Promise<ListMetadata> {
  const { url, headers, agent, send } = await prepareRequest(conn, path, query);
  headers['Accept-Encoding'] = 'gzip';
  return new Promise((resolve, reject) => {
    const req = send(url, { method: 'GET', headers, agent, timeout: TIMEOUT_MS }, (res) => {
      const code = res.statusCode ?? 0;
      if (code < 200 || code >= 300) {
        readErrorAnswer(res, code, `GET ${url.pathname}`, reject);
        return;
      }
      const decoder = new ListDecoder(onItem, undefined, itemMask);
      let failed = false;
      const encoding = String(res.headers['content-encoding'] ?? 'identity').toLowerCase();
      if (encoding !== 'identity' && encoding !== 'gzip') {
        res.resume();
        reject(new Error(`GET ${url.pathname}: unexpected Content-Encoding ${encoding.slice(0, 40)} (asked gzip or none)`));
        return;
      }
      const body = encoding === 'gzip' ? res.pipe(createGunzip()) : res;
      if (body !== res) {
        body.on('error', (error) => {
          if (failed) return;
          failed = true;
          req.destroy();
          reject(new Error(`GET ${url.pathname}: the gzip body is broken: ${error.message}`));
        });
      }
      body.on('data', (c: Buffer) => {
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
      body.on('end', () => {
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
