/**
 * Child of bench/scale/run.ts: the API stand-in (test/apiserver) holding argv[3] managed pods
 * as small objects and sending each one full size (~6 KB: bench/agent/fat-pod.ts) in lists
 * and watch events, as the real server does; with argv[4] Services (services.ts) also their
 * EndpointSlices, the opted-in Namespaces, and a kube-proxy's list/watch of slices and
 * Services (kube-proxy-client.ts) to compare bytes sent with. Prints JSON lines: `{"ev":"ready"}` once the
 * pods are in, then, after a `{"cmd":"churn",...}` line on stdin, one line per event the
 * bench measures (a pod starts draining, a pod is deleted, a drain call's answer) and
 * `{"ev":"churn-done"}` (with the bytes sent by resource and client). Exits when stdin closes.
 * argv[5] `tls` (the default) gives the agent's kubeconfig an HTTPS listener, as a real API
 * server is reached, with a certificate made here; `plain` keeps it on plain http. The bench's
 * kube-proxy and `--reader` use the plain listener: only the agent's side of TLS is measured.
 */
import { request } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { FakeApiServer, type JsonObject } from '../../test/apiserver/server.js';
import { managedPod, markDeleting, setReady } from '../../test/apiserver/pods.js';
import { fatPod } from '../agent/fat-pod.js';
import { AGENT_NODE, IP_CHURN_PLACES, LOCAL_EVERY, STORM_FLIP_PLACES, podDrainId, podIp, podName, podNamespace, podNode, podUid, wallMs } from './cluster.js';
import { appOf, checkServiceCount, putServices } from './services.js';
import { generateSelfSigned } from '../../kube/metrics-auth/serving-pair.js';
import { startKubeProxyClient } from './kube-proxy-client.js';

const [kubeconfig = '', podsText = '0', servicesText = '0', transport = 'tls'] = process.argv.slice(2);
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
if (transport === 'plain') api.writeKubeconfig(kubeconfig);
else {
  const pair = await generateSelfSigned(['kubernetes.default.svc'], new Date(), 1);
  api.writeKubeconfig(kubeconfig, await api.listenTls(pair), { ca: pair.cert, serverName: 'kubernetes.default.svc' });
}
say({ ev: 'ready', pods: PODS, services: SERVICES, slices: api.listEndpointSlices().length, url: api.url });

interface Churn {
  /** `rollout` (a rolling update with a flip every `flipEvery` replacements), `readiness-storm`, `ip-churn`. */
  mix: Mix;
  rate: number;
  /** Stop queueing new steps after this many seconds (the steps under way finish). */
  seconds: number;
  rollout: number;
  /** Soak: replace the first `rollout` places over and over, for this long. */
  soakSeconds?: number;
  flipEvery: number;
  graceSeconds: number;
  drainPort: number;
}

type Mix = 'rollout' | 'readiness-storm' | 'ip-churn';

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

/** The places of the agent's node's pods. */
function localPlaces(): number[] {
  const out: number[] = [];
  for (let p = 0; p < PODS; p++) if (podNode(p, PODS) === AGENT_NODE) out.push(p);
  return out;
}

/**
 * The churn: steps queued and run at `rate` pod events a second.
 *
 * - `rollout`: each replacement is four pod events (the new pod ADDED unready, then Ready; the
 *   old one deleting, then DELETED after its grace), one in `flipEvery` steps also flips a pod not
 *   in the rollout unready and (2 s later) Ready again. A soak (`soakSeconds`) replaces the first
 *   `rollout` places again and again until its time is up: generation g of place p is pod p + g *
 *   PODS (its own name, uid and drain id), with the IP of bank g % 2 (podIp(p) or podIp(PODS + p)).
 * - `readiness-storm`: per replacement (four events, the new pod on a new IP) four readiness
 *   flips (two events each: unready, Ready 2 s later): two thirds of the events are flips.
 * - `ip-churn`: replacements only, the new pod on the IP its place's pod had two generations
 *   before (gone ~20 s earlier), as a node's CIDR hands IPs out again.
 *
 * In the last two, one step in LOCAL_EVERY concerns one of the agent's node's ~30 pods (a
 * storm replaces each of them at most once, then flips them), the others pods elsewhere.
 */
async function churn(c: Churn): Promise<void> {
  const queue: Array<() => void> = [];
  const started = wallMs();
  const startBytes = api.bytesSent();
  say({ ev: 'churn-start', bytesSent: startBytes });
  // The stand-in's own stalls (its GC over 150,000 pods, its encoders) delay every event it
  // serves: measured apart, so a late weight 0 can be told from a slow agent.
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  let events = 0;
  let timers = 0;
  const at = (delayMs: number, fn: () => void): void => {
    timers += 1;
    setTimeout(() => {
      timers -= 1;
      queue.unshift(fn); // due now: ahead of the next steps (a DELETED comes at the end of its grace)
    }, delayMs);
  };
  const ipOf = (place: number, generation: number): string => podIp(place + (generation % 2) * PODS);
  const generations = new Map<number, number>();
  const gen = (place: number): number => generations.get(place) ?? 0;
  /** Places with a step under way (a flip not yet back, a replacement not yet done): not chosen again. */
  const busy = new Set<number>();
  const timeUp = (): boolean => wallMs() - started >= (c.soakSeconds ?? c.seconds) * 1000;

  /** Replaces the pod at `place` by its next generation: four events. `newIp`: the next generation's IP (by default its bank's). */
  const replace = (place: number, newIp?: string): void => {
    busy.add(place);
    const g = gen(place);
    generations.set(place, g + 1);
    const oldI = place + g * PODS;
    const newI = place + (g + 1) * PODS;
    const oldIp = ipOf(place, g);
    const local = podNode(place, PODS) === AGENT_NODE;
    queue.push(() => api.putPod(smallPod(newI, place, false, newIp ?? ipOf(place, g + 1))));
    queue.push(() => api.modifyPod(podNamespace(place), podName(newI), (p) => setReady(p, true)));
    queue.push(() => {
      const t = wallMs(); // before the write: the agent may see the event before this process runs again
      api.modifyPod(podNamespace(place), podName(oldI), (p) => markDeleting(p, c.graceSeconds));
      say({ ev: 'drain', ip: oldIp, t, local, kind: 'deleting' });
      if (local) drainCall(c.drainPort, oldI);
      at(c.graceSeconds * 1000, () => {
        const gt = wallMs();
        api.deletePod(podNamespace(place), podName(oldI));
        say({ ev: 'gone', ip: oldIp, t: gt, local });
        busy.delete(place);
      });
    });
  };
  /** Flips the pod at `place` unready, and Ready again 2 s later: two events. */
  const flip = (place: number): void => {
    busy.add(place);
    const g = gen(place);
    const i = place + g * PODS;
    const ip = ipOf(place, g);
    queue.push(() => {
      const t = wallMs();
      api.modifyPod(podNamespace(place), podName(i), (p) => setReady(p, false));
      say({ ev: 'drain', ip, t, local: podNode(place, PODS) === AGENT_NODE, kind: 'unready' });
      at(2000, () => {
        api.modifyPod(podNamespace(place), podName(i), (p) => setReady(p, true));
        busy.delete(place);
      });
    });
  };

  const locals = localPlaces();
  const isLocal = new Set(locals);
  /** The next free place of `pool` after cursor `cur.n` (undefined when all are busy). */
  const nextFree = (pool: readonly number[], cur: { n: number }, ok: (p: number) => boolean = () => true): number | undefined => {
    for (let tries = 0; tries < pool.length; tries++) {
      const p = pool[cur.n++ % pool.length] as number;
      if (!busy.has(p) && ok(p)) return p;
    }
    return undefined;
  };
  const remote = (from: number, count: number): number[] => {
    const out: number[] = [];
    for (let p = from; out.length < count && p < PODS; p++) if (!isLocal.has(p)) out.push(p);
    return out;
  };

  let k = 0;
  let queueNext: () => boolean;
  if (c.mix === 'rollout') {
    const rollout = c.rollout;
    // The places flipped: those after the rollout's, as many as one pass of the rollout flips (the agent's IPVS holds servers for them).
    const flipPlaces = Math.max(1, Math.min(PODS - rollout, Math.ceil(rollout / c.flipEvery)));
    let flips = 0;
    queueNext = () => {
      if (timeUp() || (c.soakSeconds === undefined && k >= rollout)) return false;
      replace(k % rollout);
      if (k % c.flipEvery === 0 && (c.soakSeconds !== undefined || rollout + flips < PODS)) {
        const f = rollout + (flips++ % flipPlaces);
        if (!busy.has(f)) flip(f);
      }
      k += 1;
      return true;
    };
  } else if (c.mix === 'readiness-storm') {
    const flipPool = remote(0, STORM_FLIP_PLACES);
    const fresh = remote((flipPool.at(-1) ?? 0) + 1, PODS); // replaced once each, in order
    const localFresh = [...locals];
    const fc = { n: 0 };
    const lc = { n: 0 };
    let rc = 0;
    queueNext = () => {
      if (timeUp()) return false;
      const local = k % LOCAL_EVERY === 0;
      if (k % 5 === 0) {
        const p = local ? localFresh.shift() : fresh[rc++];
        if (p !== undefined) replace(p, podIp(PODS + p));
        else if (local) {
          const q = nextFree(locals, lc, (x) => !busy.has(x));
          if (q !== undefined) flip(q);
        }
      } else {
        const p = local ? nextFree(locals, lc) : nextFree(flipPool, fc);
        if (p !== undefined) flip(p);
      }
      k += 1;
      return true;
    };
  } else {
    const pool = remote(0, IP_CHURN_PLACES);
    const pc = { n: 0 };
    const lc = { n: 0 };
    queueNext = () => {
      if (timeUp()) return false;
      const p = k % LOCAL_EVERY === 0 ? nextFree(locals, lc) : nextFree(pool, pc);
      if (p !== undefined) replace(p);
      k += 1;
      return true;
    };
  }
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
  loop.disable();
  say({ ev: 'churn-done', events, seconds: (wallMs() - started) / 1000, listStats: api.listStats, bytesSent: api.bytesSent(), sliceWrites: api.sliceController.stats, loop: { p50: loop.percentile(50) / 1e6, p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 } });
}

const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  const cmd = JSON.parse(line) as { cmd: string } & Churn;
  if (cmd.cmd === 'churn') void churn(cmd);
});
lines.on('close', () => void api.close().then(() => process.exit(0)));
