import type { Registry } from 'prom-client';
import type { Logger } from 'pino';
import type { ConntrackApi } from 'netlink-native/types';
import type { Clock } from '../../time/clock.js';
import type { KubeConnection } from '../../kube/connection.js';
import { StaleJanitor } from './janitor.js';
import { makeLivePodHolders } from './live-pods.js';
import { JanitorMetrics } from './metrics.js';
import { createSliceWatch } from './slice-watch.js';

export { StaleJanitor, type JanitorOptions, type ScanReport } from './janitor.js';
export { JanitorMetrics } from './metrics.js';
export { createSliceWatch, ENDPOINT_SLICES_PATH, SLICE_PAGE_SIZE, type SliceWatch } from './slice-watch.js';
export { makeLivePodHolders } from './live-pods.js';

export interface RunningJanitor {
  janitor: StaleJanitor;
  stop(): Promise<void>;
}

/** Starts the janitor: EndpointSlice watch, interval scans, metrics on the agent's registry. */
export function startJanitor(deps: {
  /** The agent's API connection (the lean one: the janitor needs no generated API client). */
  connection: KubeConnection;
  conntrack: ConntrackApi;
  registry: Registry;
  logger: Logger;
  clock: Clock;
  graceMs: number;
  intervalMs: number;
  backoffMaxMs: number;
}): RunningJanitor {
  const logger = deps.logger.child({ part: 'janitor' });
  const janitor = new StaleJanitor({
    conntrack: deps.conntrack,
    clock: deps.clock,
    logger,
    metrics: new JanitorMetrics(deps.registry),
    graceMs: deps.graceMs,
    intervalMs: deps.intervalMs,
    livePodHolders: makeLivePodHolders(deps.connection),
  });
  const watch = createSliceWatch({ connection: deps.connection, clock: deps.clock, backoffMaxMs: deps.backoffMaxMs }, {
    upsert: (slice) => janitor.upsertSlice(slice),
    remove: (key) => janitor.removeSlice(key),
    synced: () => janitor.markSynced(),
    restarting: (error, delayMs) => logger.warn({ err: error, delayMs }, 'janitor: EndpointSlice watch failed; restarting'),
  });
  watch.start();
  janitor.start();
  return {
    janitor,
    async stop() {
      await watch.stop();
      await janitor.stop();
    },
  };
}
