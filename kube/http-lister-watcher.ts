/**
 * The ListerWatcher (lister-watcher.ts) over node:http(s) on a KubeConnection: a list page is a
 * GET decoded as it streams in (list-stream.ts), a watch a stream of JSON lines
 * (watch-stream.ts). With `fields`, each listed item and watch event is masked before
 * JSON.parse (json-mask.ts) to those fields and the ones the list/watch protocol reads
 * (watch-fields.ts): the rest of an object is scanned, never built.
 */
import type { FieldMask } from '../src/field-mask.js';
import type { KubeConnection } from './connection.js';
import type { ListMetadata } from './list-decoder.js';
import type { ListerWatcher, ListRequest, WatchHandle, WatchRequest } from './lister-watcher.js';
import { streamList } from './list-stream.js';
import { watchMasks, type WatchMasks } from './watch-fields.js';
import { streamWatch } from './watch-stream.js';

export class HttpListerWatcher implements ListerWatcher {
  private readonly masks: WatchMasks | undefined;

  constructor(
    private readonly connection: KubeConnection,
    /** Collection path, e.g. `/api/v1/pods`. */
    readonly what: string,
    fields?: FieldMask,
  ) {
    this.masks = fields === undefined ? undefined : watchMasks(fields);
  }

  list(request: ListRequest, onItem: (raw: unknown) => void): Promise<ListMetadata> {
    return streamList(this.connection, this.what, request, onItem, this.masks?.item);
  }

  watch(request: WatchRequest, onEvent: (type: string, raw: unknown) => void, onDone: (error: unknown) => void): Promise<WatchHandle> {
    return streamWatch(this.connection, this.what, request, onEvent, onDone, this.masks === undefined ? {} : { mask: this.masks.event });
  }
}
