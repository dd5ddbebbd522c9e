/**
 * The ListerWatcher (lister-watcher.ts) over node:http(s) on a KubeConnection: a list page is a
 * GET decoded as it streams in (list-stream.ts), a watch a stream of JSON lines
 * (watch-stream.ts). With `fields`, each listed item and watch event is masked before
 * JSON.parse (json-mask.ts) to those fields and the ones the list/watch protocol reads
 * (watch-fields.ts): the rest of an object is scanned, never built.
 *
 * With `protobuf`, lists and watches ask for protobuf (list-stream.ts, watch-stream.ts); a list
 * or a frame that does not decode (a server whose encoding differs from what kube/protobuf/
 * reads) turns it off for the rest of the process life: the list or watch fails once, says so,
 * and is asked again as JSON.
 */
import type { FieldMask } from '../src/field-mask.js';
import type { KubeConnection } from './connection.js';
import type { ListMetadata } from './list-decoder.js';
import type { ListerWatcher, ListRequest, WatchHandle, WatchRequest } from './lister-watcher.js';
import { streamList } from './list-stream.js';
import { watchMasks, type WatchMasks } from './watch-fields.js';
import { ProtobufError } from './protobuf/wire.js';
import { streamWatch } from './watch-stream.js';

export class HttpListerWatcher implements ListerWatcher {
  private readonly masks: WatchMasks | undefined;
  private protobufRefused = false;

  constructor(
    private readonly connection: KubeConnection,
    /** Collection path, e.g. `/api/v1/pods`. */
    readonly what: string,
    fields?: FieldMask,
    private readonly protobuf = false,
  ) {
    this.masks = fields === undefined ? undefined : watchMasks(fields);
  }

  async list(request: ListRequest, onItem: (raw: unknown) => void): Promise<ListMetadata> {
    const protobuf = this.protobuf && !this.protobufRefused;
    try {
      return await streamList(this.connection, this.what, request, onItem, { itemMask: this.masks?.item, protobuf });
    } catch (error) {
      if (!(error instanceof ProtobufError)) throw error;
      this.protobufRefused = true;
      throw new Error(`list ${this.what}: ${error.message}; listing and watching as JSON from now on`, { cause: error });
    }
  }

  watch(request: WatchRequest, onEvent: (type: string, raw: unknown) => void, onDone: (error: unknown) => void): Promise<WatchHandle> {
    const done = (error: unknown): void => {
      if (!(error instanceof ProtobufError)) {
        onDone(error);
        return;
      }
      this.protobufRefused = true;
      onDone(new Error(`watch ${this.what}: ${error.message}; listing and watching as JSON from now on`, { cause: error }));
    };
    const protobuf = this.protobuf && !this.protobufRefused;
    return streamWatch(this.connection, this.what, request, onEvent, done, { ...(this.masks === undefined ? {} : { mask: this.masks.event }), ...(protobuf ? { protobuf } : {}) });
  }
}
