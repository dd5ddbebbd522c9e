/**
 * Child of bench/scale/run.ts: the API stand-in (test/apiserver) holding argv[3] managed pods
 * as small objects and sending each one full size (~6 KB: bench/agent/fat-pod.ts) in lists
 * and watch events, as the real server does; with argv[4] Services (services.ts) also their
 * EndpointSlices, the opted-in Namespaces, and a kube-proxy's list/watch of slices and
 * Services (kube-proxy-client.ts) to compare bytes sent with. Prints JSON lines: `{"ev":"ready"}` once the
 * pods are in, then, after a `{"cmd":"churn",...}` line on stdin, one line per event the
 * bench measures (a pod starts draining, a pod is deleted, a drain call's answer) and
 * `{"ev":"churn-done"}` (with the bytes sent by resource and client). Exits when stdin closes.
 */
import { request } from 'node:http';
import { createInterface } from 'node:readline';
import { FakeApiServer, type JsonObject } from '../../test/apiserver/server.js';
import { managedPod, markDeleting, setReady } from '../../test/apiserver/pods.js';
import { fatPod } from '../agent/fat-pod.js';
import { AGENT_NODE, podDrainId, podIp, podName, podNamespace, podNode, podUid, wallMs } from './cluster.js';
import { appOf, checkServiceCount, putServices } from './services.js';
import { startKubeProxyClient } from './kube-proxy-client.js';

const [kubeconfig = '', podsText = '0', servicesText = '0'] = process.argv.slice(2);
const PODS = Number(podsText);
const SERVICES = Number(servicesText);
checkServiceCount(SERVICES);
const say = (line: Record<string, unknown>): void => void process.stdout.write(`${JSON.stringify(line)}\n`);

type Meta = { name: string; namespace: string; uid: string; labels: Record<string, string>; annotations: Record<string, string>; resourceVersion?: string; deletionTimestamp?: string; deletionGracePeriodSeconds?: number };

/** The small stored pod, sent with the bulk of a real one (containers, managedFields...). */
function expand(pod: JsonObject): JsonObject {
  const meta = pod.metadata as unknown as Meta;
  const spec = pod.spec as { nodeName: string };
  const status = pod.status as { podIP: string; phase: string; conditions: Array<{ type: string; status: string }> };
  const i = Number(/(\d+)/.exec(meta.name)?.[1] ?? 0);
  const fat = fatPod({ name: meta.name, namespace: meta.namespace, nodeName: spec.nodeName, ips: [status.podIP] }, i) as JsonObject & { metadata: Record<string, unknown>; status: Record<string, unknown> };
  const ready = status.conditions.find((c) => c.type === 'Ready')?.status ?? 'False';
  fat.metadata = { ...fat.metadata, ...meta, labels: { ...(fat.metadata.labels as Record<string, string>), ...meta.labels }, annotations: { ...(fat.metadata.annotations as Record<string, string>), ...meta.annotations } };
  fat.kind = 'Pod';
  fat.apiVersion = 'v1';
  fat.status.phase = status.phase;
  fat.status.conditions = (fat.status.conditions as Array<{ type: string; status: string }>).map((c) => (c.type === 'Ready' || c.type === 'ContainersReady' ? { ...c, status: ready } : c));
  return fat;
}

/** Pod i at place `index` (its namespace and node): IP `ip`, by default podIp(i). */
function smallPod(i: number, index: number, ready: boolean, ip = podIp(i)): JsonObject {
  const app = appOf(index, SERVICES);
  return managedPod({ name: podName(i), namespace: podNamespace(index), nodeName: podNode(index, PODS), ips: [ip], uid: podUid(i), drainId: podDrainId(i), ready, ...(app === undefined ? {} : { app }) });
}

const api = new FakeApiServer();
api.expand = expand;
await api.start();
for (let i = 0; i < PODS; i++) api.putPod(smallPod(i, i, true));
if (SERVICES > 0) {
  putServices(api, SERVICES);
  await startKubeProxyClient(api.url);
}
api.writeKubeconfig(kubeconfig);
say({ ev: 'ready', pods: PODS, services: SERVICES, slices: api.listEndpointSlices().length });

interface Churn {
  rate: number;
  rollout: number;
  /** Soak: replace the first `rollout` places over and over, for this long. */
  soakSeconds?: number;
  flipEvery: number;
  graceSeconds: number;
  drainPort: number;
}

/** A preStop call for a local pod being deleted: its answer's status (never 404 for a known pod). */
function drainCall(port: number, i: number): void {
  const started = wallMs();
  const req = request({ host: '127.0.0.1', port, path: `/v1/drain/${podDrainId(i)}`, method: 'GET', timeout: 120_000 }, (res) => {
    let body = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      if (body.length < 300) body += chunk;
    });
    res.on('end', () => say({ ev: 'call', i, status: res.statusCode, ms: wallMs() - started, ...(res.statusCode === 200 ? {} : { body: body.slice(0, 300) }) }));
  });
  req.on('error', (error) => say({ ev: 'call', i, status: 0, error: error.message }));
  req.end();
}

/**
 * The rollout: each replacement is four pod events (the new pod ADDED unready, then Ready;
 * the old one deleting, then DELETED after its grace), one in `flipEvery` steps also flips a
 * pod not in the rollout unready and (2 s later) Ready again; `rate` events a second.
 *
 * A soak (`soakSeconds`) replaces the first `rollout` places again and again until its time
 * is up: generation g of place p is pod p + g * PODS (its own name, uid and drain id), with
 * the IP of bank g % 2 (podIp(p) or podIp(PODS + p)), as a node's CIDR hands IPs out again.
 */
async function churn(c: Churn): Promise<void> {
  const queue: Array<() => void> = [];
  const started = wallMs();
  let events = 0;
  let timers = 0;
  const at = (delayMs: number, fn: () => void): void => {
    timers += 1;
    setTimeout(() => {
      timers -= 1;
      queue.unshift(fn); // due now: ahead of the rollout's next steps (a DELETED comes at the end of its grace)
    }, delayMs);
  };
  const ipOf = (place: number, generation: number): string => podIp(place + (generation % 2) * PODS);
  const generations = new Int32Array(c.rollout);
  // The places flipped: those after the rollout's, as many as one pass of the rollout flips (the agent's IPVS holds servers for them).
  const flipPlaces = Math.max(1, Math.min(PODS - c.rollout, Math.ceil(c.rollout / c.flipEvery)));
  let flips = 0;
  let k = 0;
  /** Queues the next replacement's steps; false when the churn has none left. */
  const queueNext = (): boolean => {
    if (c.soakSeconds === undefined ? k >= c.rollout : wallMs() - started >= c.soakSeconds * 1000) return false;
    const place = k % c.rollout;
    const gen = generations[place] as number;
    generations[place] = gen + 1;
    const oldI = place + gen * PODS;
    const newI = place + (gen + 1) * PODS;
    const oldIp = ipOf(place, gen);
    const local = podNode(place, PODS) === AGENT_NODE;
    queue.push(() => api.putPod(smallPod(newI, place, false, ipOf(place, gen + 1))));
    queue.push(() => api.modifyPod(podNamespace(place), podName(newI), (p) => setReady(p, true)));
    queue.push(() => {
      const t = wallMs(); // before the write: the agent may see the event before this process runs again
      api.modifyPod(podNamespace(place), podName(oldI), (p) => markDeleting(p, c.graceSeconds));
      say({ ev: 'drain', ip: oldIp, t, local });
      if (local) drainCall(c.drainPort, oldI);
      at(c.graceSeconds * 1000, () => {
        const gt = wallMs();
        api.deletePod(podNamespace(place), podName(oldI));
        say({ ev: 'gone', ip: oldIp, t: gt, local });
      });
    });
    if (k % c.flipEvery === 0 && (c.soakSeconds !== undefined || c.rollout + flips < PODS)) {
      const f = c.rollout + (flips++ % flipPlaces);
      queue.push(() => {
        const t = wallMs();
        api.modifyPod(podNamespace(f), podName(f), (p) => setReady(p, false));
        say({ ev: 'drain', ip: podIp(f), t, local: podNode(f, PODS) === AGENT_NODE });
        at(2000, () => api.modifyPod(podNamespace(f), podName(f), (p) => setReady(p, true)));
      });
    }
    k += 1;
    return true;
  };
  let more = true;
  // Paced: at each tick, the events due by now (rate per second), so timer jitter does not change the rate.
  await new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      const due = Math.floor(((wallMs() - started) / 1000) * c.rate);
      while (events < due) {
        if (queue.length === 0 && more) more = queueNext();
        const next = queue.shift();
        if (next === undefined) break;
        next();
        events += 1;
      }
      if (!more && queue.length === 0 && timers === 0) {
        clearInterval(tick);
        resolve();
      } else if (queue.length === 0 && more) more = queueNext();
    }, 2);
  });
  say({ ev: 'churn-done', events, seconds: (wallMs() - started) / 1000, listStats: api.listStats, bytesSent: api.bytesSent(), sliceWrites: api.sliceController.stats });
}

const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  const cmd = JSON.parse(line) as { cmd: string } & Churn;
  if (cmd.cmd === 'churn') void churn(cmd);
});
lines.on('close', () => void api.close().then(() => process.exit(0)));
