/**
 * List/watch of every EndpointSlice (discovery.k8s.io/v1, all namespaces): the agent's shared
 * restarting list/watch (kube/list-watch.ts: paginated list, watch with bookmarks, relist on
 * 410, backoff restarts), each slice pruned to what ownership reads as it arrives. `synced`
 * fires once the first full list has been applied: the janitor scans nothing before (an
 * empty endpoint set would call every entry stale). `remove` gets the slice's `namespace/name`.
 */
import { pruneEndpointSlice, sliceKey, type EndpointSliceLike } from '../../src/stale/index.js';
import type { Clock } from '../../time/clock.js';
import type { KubeConnection } from '../../kube/connection.js';
import { RestartingListWatch, type ListWatchHandlers } from '../../kube/list-watch.js';

export type SliceHandlers = ListWatchHandlers<EndpointSliceLike>;
export type SliceWatch = RestartingListWatch<EndpointSliceLike>;

export const ENDPOINT_SLICES_PATH = '/apis/discovery.k8s.io/v1/endpointslices';
export const SLICE_PAGE_SIZE = 500;

export function createSliceWatch(options: { connection: KubeConnection; clock: Clock; backoffMaxMs: number }, handlers: SliceHandlers): SliceWatch {
  return new RestartingListWatch<EndpointSliceLike>(
    {
      connection: options.connection,
      path: ENDPOINT_SLICES_PATH,
      pageSize: SLICE_PAGE_SIZE,
      project: (raw) => pruneEndpointSlice(raw as EndpointSliceLike),
      keyOf: sliceKey,
      clock: options.clock,
      backoffMaxMs: options.backoffMaxMs,
    },
    handlers,
  );
}
