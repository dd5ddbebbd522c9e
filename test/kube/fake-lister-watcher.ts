/**
 * A scripted ListerWatcher (kube/lister-watcher.ts) for the list/watch's unit tests: every
 * request is recorded; a list is answered from a queue the test fills (items, or an error);
 * a watch stays open until the test sends its events and ends it.
 */
import type { ListMetadata } from '../../kube/list-decoder.js';
import type { ListerWatcher, ListRequest, WatchHandle, WatchRequest } from '../../kube/lister-watcher.js';

/** One list page as the server would answer it, or the error it fails with. */
export type ListAnswer = { items: unknown[]; resourceVersion?: string; continue?: string } | Error;

/** An error as an HTTP answer carries it (a KubeRequestError's `statusCode`). */
export function httpError(statusCode: number, message = `HTTP ${statusCode}`): Error {
  return Object.assign(new Error(message), { statusCode });
}

/** An object of the fake collection, keyed by its name. */
export function item(name: string, resourceVersion = '1'): { metadata: { name: string; resourceVersion: string } } {
  return { metadata: { name, resourceVersion } };
}

export class FakeWatch {
  private doneCallback: ((error: unknown) => void) | undefined;
  aborted = false;
  ended = false;

  constructor(
    readonly request: WatchRequest,
    private readonly onEvent: (type: string, raw: unknown) => void,
    onDone: (error: unknown) => void,
  ) {
    this.doneCallback = onDone;
  }

  get open(): boolean {
    return !this.aborted && !this.ended;
  }

  send(type: string, raw: unknown): void {
    if (this.open) this.onEvent(type, raw);
  }

  bookmark(resourceVersion: string, initialEventsEnd = false): void {
    this.send('BOOKMARK', { metadata: { resourceVersion, ...(initialEventsEnd ? { annotations: { 'k8s.io/initial-events-end': 'true' } } : {}) } });
  }

  /** The stream ends: `null` as a server's timeout ends it, else with that error. */
  end(error: unknown = null): void {
    if (!this.open) return;
    this.ended = true;
    const done = this.doneCallback;
    this.doneCallback = undefined;
    done?.(error);
  }

  handle(): WatchHandle {
    return { abort: () => { this.aborted = true; } };
  }
}

export class FakeListerWatcher implements ListerWatcher {
  readonly what = '/fake/things';
  readonly lists: ListRequest[] = [];
  readonly watches: FakeWatch[] = [];
  private readonly answers: ListAnswer[] = [];

  /** Queues the answers of the next lists, in order. */
  answer(...answers: ListAnswer[]): void {
    this.answers.push(...answers);
  }

  get lastWatch(): FakeWatch {
    const last = this.watches[this.watches.length - 1];
    if (last === undefined) throw new Error('no watch was opened');
    return last;
  }

  list(request: ListRequest, onItem: (raw: unknown) => void): Promise<ListMetadata> {
    this.lists.push(request);
    const answer = this.answers.shift();
    if (answer === undefined) return Promise.reject(new Error('fake: no list answer queued'));
    if (answer instanceof Error) return Promise.reject(answer);
    for (const raw of answer.items) onItem(raw);
    return Promise.resolve({ ...(answer.resourceVersion === undefined ? {} : { resourceVersion: answer.resourceVersion }), ...(answer.continue === undefined ? {} : { continue: answer.continue }) });
  }

  watch(request: WatchRequest, onEvent: (type: string, raw: unknown) => void, onDone: (error: unknown) => void): Promise<WatchHandle> {
    const watch = new FakeWatch(request, onEvent, onDone);
    this.watches.push(watch);
    return Promise.resolve(watch.handle());
  }
}
