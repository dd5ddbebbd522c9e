import { demoInjection, DEMO_MANIFEST } from './demo-inject.js';
import { runLabScenario } from './run.js';

export interface DemoIo {
  log: (message: string) => void;
  write: (text: string) => void;
}

/**
 * `npm run demo`: the webhook's injection on a sample Deployment, then the ghost scenario on
 * this kernel without and with conndrain, ending with the before/after table.
 */
export async function runDemo(io: DemoIo): Promise<void> {
  const started = Date.now();
  io.write(`1. The webhook injects a drain hook and a matching grace period (${DEMO_MANIFEST}):\n`);
  for (const line of await demoInjection()) io.write(`   ${line}\n`);
  io.write('   (grace = max(existing, drain 45s + shutdown-grace 15s); the agent answers the hook once the pod has no open flows)\n');
  io.write('\n2. Ghost conntrack after a scale-down, on this kernel (network namespaces, kube-proxy-style nft DNAT):\n');
  io.write('   a client keeps UDP (DNS-like) flows and TCP streams to a ClusterIP with two pods; one pod is deleted.\n');
  io.write('   Run once without conndrain, once with the conndrain agent running on the node.\n\n');
  const outcome = await runLabScenario('ghost', { command: 'npm run demo', log: io.log });
  io.write(`${outcome.table}\n\n`);
  for (const note of outcome.notes) io.write(`- ${note}\n`);
  io.write(`\nDone in ${((Date.now() - started) / 1000).toFixed(1)} s. Full runs and charts: npm run lab -- ghost (results in lab/results/).\n`);
}
