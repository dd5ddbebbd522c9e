/**
 * Kubernetes Events on pods for app teams, from the agent of the pod's own node only:
 * `DrainStarted`, then one `DrainFinished` saying how it ended (idle, timeout, pod-gone,
 * ready-again), and `ConntrackFlushed`; `DrainInterrupted` (Warning) when an agent crash cut a
 * held preStop call short. A write the API does not answer (network, 5xx, 429) is retried with
 * backoff from a bounded queue (event-retry.ts); nothing here is ever fatal.
 */
import type { CoreV1Event } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { EVENT_CONNTRACK_FLUSHED, EVENT_DRAIN_FINISHED, EVENT_DRAIN_INTERRUPTED, EVENT_DRAIN_STARTED } from '../../src/contract.js';
import type { KubeConnection } from '../../kube/connection.js';
import type { PodRecord } from '../../src/drain-plan.js';
import { kubeRequest } from '../../kube/request.js';
import type { Clock } from '../../time/clock.js';
import { EventRetryQueue, type EventWrite } from './event-retry.js';

export interface EventPod {
  uid: string;
  namespace: string;
  name: string;
  nodeName: string | undefined;
  ips: readonly string[];
}

/** The pod of a plan record (its key is namespace/name). */
export function eventPodOf(rec: Pick<PodRecord, 'uid' | 'key' | 'nodeName' | 'ips'>): EventPod {
  const at = rec.key.indexOf('/');
  const { namespace, name } = at < 0 ? { namespace: '', name: rec.key } : { namespace: rec.key.slice(0, at), name: rec.key.slice(at + 1) };
  return { uid: rec.uid, namespace, name, nodeName: rec.nodeName, ips: rec.ips };
}

export type EventSink = (namespace: string, body: CoreV1Event) => Promise<unknown>;

/** POST /api/v1/namespaces/<ns>/events (core/v1 Event, as CoreV1Api.createNamespacedEvent sends it). */
export function kubeEventSink(connection: KubeConnection): EventSink {
  return (namespace, body) => kubeRequest(connection, 'POST', `/api/v1/namespaces/${encodeURIComponent(namespace)}/events`, {}, body);
}

/** How failed writes are retried: the queue's bound and backoff, and who counts what is dropped. */
export interface EventRetryPolicy {
  clock: Clock;
  capacity?: number;
  initialMs?: number;
  maxMs?: number;
  dropped?(why: 'refused' | 'overflow'): void;
}

export class PodEvents {
  /** Pods with a DrainStarted and no DrainFinished yet. */
  private readonly open = new Set<string>();
  private readonly pendingWrites = new Set<Promise<void>>();
  private readonly retries: EventRetryQueue | undefined;

  constructor(
    private readonly sink: EventSink,
    private readonly nodeName: string,
    private readonly logger: Logger,
    private readonly now: () => number,
    retry?: EventRetryPolicy,
  ) {
    this.retries = retry === undefined ? undefined : new EventRetryQueue({
      clock: retry.clock,
      capacity: retry.capacity ?? 1000,
      initialMs: retry.initialMs ?? 500,
      maxMs: retry.maxMs ?? 30_000,
      dropped: (write, why, error) => {
        retry.dropped?.(why);
        this.logger.warn({ event: write.what, why, err: error }, 'could not record the Kubernetes Event; dropped');
      },
      retrying: (write, error, delayMs) => this.logger.info({ event: write.what, err: error, retryInMs: delayMs, waiting: this.retries?.size }, 'could not record the Kubernetes Event yet; retrying'),
    });
  }

  /** Events waiting for a retry. */
  get waiting(): number {
    return this.retries?.size ?? 0;
  }

  /** Shutdown: no more retries; what still waits is logged. */
  stop(): void {
    const left = this.retries?.stop() ?? [];
    if (left.length > 0) this.logger.warn({ events: left.map((w) => w.what) }, 'stopping with Kubernetes Events not recorded');
  }

  drainStarted(pod: EventPod, message: string): void {
    if (!this.mine(pod) || this.open.has(pod.uid)) return;
    this.open.add(pod.uid);
    this.emit(pod, EVENT_DRAIN_STARTED, message);
  }

  drainFinished(pod: EventPod, ended: string, message: string): void {
    if (!this.mine(pod) || !this.open.delete(pod.uid)) return;
    this.emit(pod, EVENT_DRAIN_FINISHED, `ended: ${ended}; ${message}`);
  }

  /** A drain another agent instance started (its DrainStarted is posted): its DrainFinished comes from here. */
  drainResumed(pod: EventPod): void {
    if (this.mine(pod)) this.open.add(pod.uid);
  }

  /** Posts DrainInterrupted (retried while the API fails); `recorded` once the API took it. False when it is not this node's pod. */
  drainInterrupted(pod: EventPod, message: string, recorded?: () => void): boolean {
    if (!this.mine(pod)) return false;
    this.emit(pod, EVENT_DRAIN_INTERRUPTED, message, 'Warning', recorded);
    return true;
  }

  conntrackFlushed(pod: EventPod, message: string): void {
    if (!this.mine(pod)) return;
    this.open.delete(pod.uid);
    this.emit(pod, EVENT_CONNTRACK_FLUSHED, message);
  }

  /** Waits for the events being written (shutdown, tests). */
  async flush(): Promise<void> {
    await Promise.all([...this.pendingWrites]);
  }

  private mine(pod: EventPod): boolean {
    return pod.nodeName === this.nodeName && pod.name !== '';
  }

  private emit(pod: EventPod, reason: string, message: string, type: 'Normal' | 'Warning' = 'Normal', recorded?: () => void): void {
    const at = new Date(this.now());
    const body: CoreV1Event = {
      metadata: { generateName: `${pod.name}.`, namespace: pod.namespace },
      involvedObject: { kind: 'Pod', apiVersion: 'v1', namespace: pod.namespace, name: pod.name, uid: pod.uid },
      reason,
      message,
      type,
      source: { component: 'conndrain-agent', host: this.nodeName },
      reportingComponent: 'conndrain.io/agent',
      reportingInstance: this.nodeName,
      firstTimestamp: at,
      lastTimestamp: at,
      count: 1,
    };
    const log = this.logger.child({ pod: `${pod.namespace}/${pod.name}`, ips: pod.ips, reason });
    const event: EventWrite = {
      what: `${pod.namespace}/${pod.name} ${reason}`,
      send: async () => {
        const result = await this.sink(pod.namespace, body);
        recorded?.();
        return result;
      },
    };
    const write = event.send().then(
      () => log.debug('event recorded'),
      (error: unknown) => {
        if (this.retries === undefined) log.warn({ err: error }, 'could not record the Kubernetes Event (ignored)');
        else this.retries.failed(event, error);
      },
    );
    this.pendingWrites.add(write);
    void write.finally(() => this.pendingWrites.delete(write));
  }
}
