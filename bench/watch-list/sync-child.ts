/**
 * Child of bench/watch-list/run.ts: the agent's pod watch and pod store alone (agent/pods/watch.ts,
 * agent/pods/pod-cache.ts) against the API stand-in, with `--watch-list` argv[3]. Prints JSON
 * lines: `start` (modules loaded, nothing asked yet), the watch's own log lines (which path
 * gave the initial state), then `synced` with the pod count. Exits when stdin closes.
 */
import { createInterface } from 'node:readline';
import { pino } from 'pino';
import { PodCache } from '../../agent/pods/pod-cache.js';
import { PodWatch } from '../../agent/pods/watch.js';
import { systemClock } from '../../time/clock.js';
import { loadKubeConnection } from '../../kube/load.js';
import type { WatchListMode } from '../../kube/watch-list.js';

const [kubeconfig = '', modeText = 'auto'] = process.argv.slice(2);
const say = (line: Record<string, unknown>): void => void process.stdout.write(`${JSON.stringify(line)}\n`);

const connection = await loadKubeConnection({ kubeconfig });
const cache = new PodCache(0);
const watch = new PodWatch(
  { connection, backoffMaxMs: 30_000, clock: systemClock, logger: pino({ level: 'info' }), watchList: modeText as WatchListMode },
  {
    upsert: (pod) => void cache.upsert(pod),
    remove: (uid) => void cache.remove(uid),
    synced: () => say({ ev: 'synced', pods: cache.size, t: Date.now() }),
    restarting: (error) => say({ ev: 'restarting', error: String(error) }),
  },
);
say({ ev: 'start', t: Date.now() });
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.includes('go')) watch.start();
});
createInterface({ input: process.stdin }).on('close', () => void watch.stop().then(() => process.exit(0)));
