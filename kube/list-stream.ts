/**
 * One list request whose body is decoded as it arrives (list-decoder.ts): each item is handed
 * to `onItem` at once, so the caller projects it and the raw object is garbage right away.
 * A non-2xx answer rejects with a KubeRequestError carrying the status code (its body read
 * up to 64 KB for the message).
 *
 * Asks for gzip, as client-go's transport does: the API server compresses a list over 128 KiB
 * (APIResponseCompression), ~7 times fewer bytes for the cluster's EndpointSlices
 * (bench/slice-bytes); the body is inflated as it arrives, so the memory bound stays one chunk.
 *
 * With `protobuf` (kinds kube/protobuf/ decodes: EndpointSlice), it asks for protobuf first, as
 * client-go's protobuf content type does; whatever the server answers with (its Content-Type)
 * is read: a protobuf list by kube/protobuf/list.ts, its items handed out as the protobuf watch
 * hands them (endpoints encoded and digested), anything else as JSON.
 */
import { createGunzip } from 'node:zlib';
import type { KubeConnection } from './connection.js';
import type { JsonMask } from './json-mask.js';
import { ListDecoder, type ListMetadata } from './list-decoder.js';
import { ProtobufListDecoder } from './protobuf/list.js';
import { prepareRequest, readErrorAnswer, type KubeQuery } from './request.js';

const TIMEOUT_MS = 120_000;

export type ListQuery = KubeQuery;

const PROTOBUF = 'application/vnd.kubernetes.protobuf';

export interface ListStreamOptions {
  /** Each JSON item masked with this before it is parsed (json-mask.ts). */
  itemMask?: JsonMask | undefined;
  /** Ask for protobuf first (kinds kube/protobuf/ decodes: EndpointSlice). */
  protobuf?: boolean;
}

/** GETs `path` and streams its `items` to `onItem`; resolves with the list's metadata. */
export async function streamList(conn: KubeConnection, path: string, query: ListQuery, onItem: (item: unknown) => void, options: ListStreamOptions = {}): Promise<ListMetadata> {
  const { url, headers, agent, send } = await prepareRequest(conn, path, query);
  headers['Accept-Encoding'] = 'gzip';
  if (options.protobuf === true) headers.Accept = `${PROTOBUF}, application/json`;
  return new Promise((resolve, reject) => {
    const req = send(url, { method: 'GET', headers, agent, timeout: TIMEOUT_MS }, (res) => {
      const code = res.statusCode ?? 0;
      if (code < 200 || code >= 300) {
        readErrorAnswer(res, code, `GET ${url.pathname}`, reject);
        return;
      }
      const decoder = String(res.headers['content-type'] ?? '').startsWith(PROTOBUF) ? new ProtobufListDecoder(onItem) : new ListDecoder(onItem, undefined, options.itemMask);
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
