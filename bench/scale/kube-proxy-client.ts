/**
 * What a kube-proxy receives, for comparison with the agent: a list then a watch of every
 * EndpointSlice under kube-proxy's label selector and of every Service, with User-Agent
 * `kube-proxy` so the stand-in counts its bytes apart (`bytesSent().byClient['kube-proxy']`).
 * The slice list and watch ask `Accept: application/vnd.kubernetes.protobuf, application/json`,
 * as a real kube-proxy does (its `--kube-api-content-type` is protobuf), so the stand-in sends
 * them in protobuf (test/apiserver/protobuf.ts) and counts those bytes; the Service list and
 * watch are JSON (the stand-in encodes only slices in protobuf). Lists ask for gzip, as
 * client-go does. The bodies are read for the list's resourceVersion and dropped.
 */
import { get } from 'node:http';
import { ProtobufListDecoder } from '../../kube/protobuf/list.js';

export const KUBE_PROXY_SLICE_SELECTOR = '!service.kubernetes.io/headless,!service.kubernetes.io/service-proxy-name';
const USER_AGENT = 'kube-proxy';

/** Lists (fetch asks gzip and inflates it); the list's resourceVersion. */
async function listRv(url: string, accept?: string): Promise<string> {
  const res = await fetch(url, { headers: { 'user-agent': USER_AGENT, ...(accept === undefined ? {} : { accept }) } });
  if (String(res.headers.get('content-type')).startsWith('application/vnd.kubernetes.protobuf')) {
    const decoder = new ProtobufListDecoder(() => undefined);
    decoder.write(Buffer.from(await res.arrayBuffer()));
    return decoder.end().resourceVersion ?? '0';
  }
  const text = await res.text();
  // The resourceVersion is in the list's head, before the items.
  return /"resourceVersion":"(\d+)"/.exec(text.slice(0, 300))?.[1] ?? '0';
}

/** What a kube-proxy's slice list and watch ask for: protobuf first, JSON as the fallback. */
const PROTOBUF_ACCEPT = 'application/vnd.kubernetes.protobuf, application/json';

function watch(url: string, accept?: string): void {
  get(url, { headers: { 'user-agent': USER_AGENT, ...(accept === undefined ? {} : { accept }) } }, (res) => res.resume()).on('error', () => undefined);
}

/** Lists then watches slices and Services as kube-proxy does (the watches stay open until the server closes). */
export async function startKubeProxyClient(apiUrl: string): Promise<void> {
  const paths = [
    { path: `/apis/discovery.k8s.io/v1/endpointslices?labelSelector=${encodeURIComponent(KUBE_PROXY_SLICE_SELECTOR)}`, accept: PROTOBUF_ACCEPT },
    { path: '/api/v1/services?', accept: undefined },
  ];
  for (const { path, accept } of paths) {
    const rv = await listRv(`${apiUrl}${path}${path.endsWith('?') ? '' : '&'}resourceVersion=0`, accept);
    watch(`${apiUrl}${path}${path.endsWith('?') ? '' : '&'}watch=true&allowWatchBookmarks=true&resourceVersion=${rv}`, accept);
  }
}
