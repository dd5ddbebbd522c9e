/**
 * List/watch of every EndpointSlice (discovery.k8s.io/v1, all namespaces) with
 * `@kubernetes/client-node`'s ListWatch, restarted with backoff after errors (its informer
 * stops on them) and relisting on 410 by itself. The list is paginated. `synced` fires once
 * the first full list has been applied: the janitor scans nothing before (an empty endpoint
 * set would call every entry stale).
 */
import { DiscoveryV1Api, KubeConfig, ListWatch, Watch, type V1EndpointSlice, type V1EndpointSliceList } from '@kubernetes/client-node';
import type { Clock, TimerHandle } from '../clock.js';

export interface SliceHandlers {
  upsert(slice: V1EndpointSlice): void;
  remove(slice: V1EndpointSlice): void;
  synced(): void;
  restarting(error: unknown, delayMs: number): void;
}

export const ENDPOINT_SLICES_PATH = '/apis/discovery.k8s.io/v1/endpointslices';
const BACKOFF_START_MS = 250;

class NotifyingWatch extends Watch {
  constructor(config: KubeConfig, private readonly onWatch: () => void) {
    super(config);
  }

  override watch(
    path: string,
    queryParams: Record<string, string | number | boolean | undefined>,
    callback: (phase: string, apiObj: unknown, watchObj?: unknown) => void,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    this.onWatch();
    return super.watch(path, { ...queryParams, allowWatchBookmarks: true, timeoutSeconds: 300 }, callback, done);
  }
}

export class SliceWatch {
  private listWatch: ListWatch<V1EndpointSlice> | undefined;
  private everSynced = false;
  private listed = false;
  private backoffMs = BACKOFF_START_MS;
  private restartTimer: TimerHandle | undefined;
  private stopped = false;

  constructor(
    private readonly options: { kubeConfig: KubeConfig; clock: Clock; backoffMaxMs: number },
    private readonly handlers: SliceHandlers,
  ) {}

  start(): void {
    const api = this.options.kubeConfig.makeApiClient(DiscoveryV1Api);
    const list = async (): Promise<V1EndpointSliceList> => {
      const items: V1EndpointSlice[] = [];
      let token: string | undefined;
      let last: V1EndpointSliceList;
      do {
        last = await api.listEndpointSliceForAllNamespaces({ limit: 500, ...(token === undefined ? {} : { _continue: token }) });
        items.push(...last.items);
        token = last.metadata?._continue;
      } while (token !== undefined && token !== '');
      this.backoffMs = BACKOFF_START_MS;
      this.listed = true;
      return { ...last, items };
    };
    // ListWatch applies a list's items, then opens the watch: the first watch after a list means synced.
    const watch = new NotifyingWatch(this.options.kubeConfig, () => {
      if (this.listed) this.markSynced();
    });
    const lw = new ListWatch<V1EndpointSlice>(ENDPOINT_SLICES_PATH, watch, list, false);
    lw.on('add', (s) => this.handlers.upsert(s));
    lw.on('update', (s) => this.handlers.upsert(s));
    lw.on('delete', (s) => this.handlers.remove(s));
    lw.on('error', (error: unknown) => this.scheduleRestart(error));
    this.listWatch = lw;
    this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.restartTimer?.cancel();
    await this.listWatch?.stop();
  }

  private markSynced(): void {
    if (this.everSynced) return;
    this.everSynced = true;
    this.handlers.synced();
  }

  private run(): void {
    if (this.listWatch === undefined || this.stopped) return;
    this.listWatch.start().catch((error: unknown) => this.scheduleRestart(error));
  }

  private scheduleRestart(error: unknown): void {
    if (this.stopped || this.restartTimer !== undefined) return;
    const delay = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, this.options.backoffMaxMs);
    this.handlers.restarting(error, delay);
    this.restartTimer = this.options.clock.setTimeout(() => {
      this.restartTimer = undefined;
      this.run();
    }, delay);
  }
}
