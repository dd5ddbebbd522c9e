/**
 * The floor for any JavaScript reader of the agent's slices (`--reader`): lists then watches
 * the EndpointSlices under the agent's selector and keeps nothing. The watch is read as the
 * agent reads it (protobuf: frames split, each event decoded to its slice's metadata, ports and
 * endpoint digests, no endpoint decoded) or, with `json`, split into lines and JSON.parsed.
 * What this costs during the churn is what a Node.js process pays for the bytes alone, before
 * any agent logic; the bench reports the agent's CPU beside it.
 *
 * Usage: reader-child.ts API_URL [protobuf|json]. Prints `{"ev":"ready"}` once the watch is open, then one
 * `{"ev":"read",...}` line (events and bytes so far) whenever stdin gets a line.
 */
import { get, type IncomingMessage } from 'node:http';
import { createInterface } from 'node:readline';
import { FrameSplitter } from '../../kube/protobuf/frames.js';
import { readWatchEvent } from '../../kube/protobuf/watch-event.js';
import { LineSplitter } from '../../kube/watch-stream.js';
import { ENDPOINT_SLICE_SELECTOR } from '../../src/contract.js';

const [apiUrl = '', encoding = 'protobuf'] = process.argv.slice(2);
const PROTOBUF = 'application/vnd.kubernetes.protobuf';
/** Its own User-Agent: the API stand-in counts its bytes apart from the agent's and kube-proxy's. */
const USER_AGENT = 'bench-reader';
const path = `/apis/discovery.k8s.io/v1/endpointslices?labelSelector=${encodeURIComponent(ENDPOINT_SLICE_SELECTOR)}`;
const say = (line: Record<string, unknown>): void => void process.stdout.write(`${JSON.stringify(line)}\n`);

function fetchBody(url: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    get(url, { headers: { 'user-agent': USER_AGENT } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve(Buffer.concat(parts)));
      res.on('error', reject);
    }).on('error', reject);
  });
}

let events = 0;
let bytes = 0;
const list = JSON.parse((await fetchBody(`${apiUrl}${path}&resourceVersion=0`)).toString('utf8')) as { metadata?: { resourceVersion?: string } };
const rv = list.metadata?.resourceVersion ?? '0';
const lines = encoding === 'json' ? new LineSplitter((line) => {
  JSON.parse(line.toString('utf8'));
  events += 1;
}, 16 * 1024 * 1024) : new FrameSplitter((frame) => {
  readWatchEvent(frame);
  events += 1;
}, 16 * 1024 * 1024);
await new Promise<void>((resolve, reject) => {
  get(`${apiUrl}${path}&watch=true&allowWatchBookmarks=true&resourceVersion=${rv}`, { headers: { 'user-agent': USER_AGENT, ...(encoding === 'json' ? {} : { accept: `${PROTOBUF}, application/json` }) } }, (res: IncomingMessage) => {
    if (encoding !== 'json' && !String(res.headers['content-type']).startsWith(PROTOBUF)) reject(new Error(`reader: asked for protobuf, got ${String(res.headers['content-type'])}`));
    res.on('data', (c: Buffer) => {
      bytes += c.length;
      lines.write(c);
    });
    resolve();
  }).on('error', reject);
});
say({ ev: 'ready' });
createInterface({ input: process.stdin }).on('line', () => say({ ev: 'read', events, bytes })).on('close', () => process.exit(0));
