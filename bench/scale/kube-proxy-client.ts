/**
 * What a kube-proxy receives, for comparison with the agent: a list then a watch of every
 * EndpointSlice under kube-proxy's label selector and of every Service, with User-Agent
 * `kube-proxy` so the stand-in counts its bytes apart (`bytesSent().byClient['kube-proxy']`).
 * The slice watch asks `Accept: application/vnd.kubernetes.protobuf, application/json`, as a
 * real kube-proxy does (its `--kube-api-content-type` is protobuf), so the stand-in sends its
 * events as protobuf frames (test/apiserver/protobuf.ts) and counts those bytes; the lists and
 * the Service watch are JSON (the stand-in encodes only slice watches in protobuf; a real
 * kube-proxy's lists would be protobuf too: bench/slice-bytes measures that). The bodies are
 * read and dropped.
 */
import { get } from 'node:http';

export const KUBE_PROXY_SLICE_SELECTOR = '!service.kubernetes.io/headless,!service.kubernetes.io/service-proxy-name';
const USER_AGENT = 'kube-proxy';

async function listRv(url: string): Promise<string> {
  const res = await fetch(url, { headers: { 'user-agent': USER_AGENT } });
  const text = await res.text();
  // The resourceVersion is in the list's head, before the items.
  return /"resourceVersion":"(\d+)"/.exec(text.slice(0, 300))?.[1] ?? '0';
}

/** What a kube-proxy's watch asks for: protobuf first, JSON as the fallback. */
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
    const rv = await listRv(`${apiUrl}${path}${path.endsWith('?') ? '' : '&'}resourceVersion=0`);
    watch(`${apiUrl}${path}${path.endsWith('?') ? '' : '&'}watch=true&allowWatchBookmarks=true&resourceVersion=${rv}`, accept);
  }
}
