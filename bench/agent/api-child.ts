/**
 * Child of bench/agent/run.ts: the API server stand-in (test/apiserver) with argv[3] managed
 * pods (full-size objects, fat-pod.ts) spread over 100 nodes and 200 namespaces; writes a kubeconfig to argv[2], prints
 * "ready", exits when stdin closes. Its own process, so the agent's RSS is measured alone.
 */
import { FakeApiServer } from '../../test/apiserver/server.js';
import { fatPod } from './fat-pod.js';

const [kubeconfig = '', podsText = '0'] = process.argv.slice(2);
const api = new FakeApiServer();
await api.start();
const pods = Number(podsText);
for (let i = 0; i < pods; i++) {
  api.putPod(fatPod({ name: `pod-${i}`, namespace: `ns-${i % 200}`, nodeName: `node-${i % 100}`, ips: [`10.${64 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`] }, i));
}
api.writeKubeconfig(kubeconfig);
process.stdout.write('ready\n');
process.stdin.resume();
process.stdin.on('end', () => void api.close().then(() => process.exit(0)));
