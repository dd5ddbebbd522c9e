/**
 * The masks a list/watch decodes with (json-mask.ts): the fields its caller reads of an object
 * plus those the list/watch protocol itself reads, so an ERROR event (a Status: code, reason,
 * message, details), a BOOKMARK (metadata.resourceVersion, the initial-events-end annotation)
 * and every object's resourceVersion still arrive whole, whatever the caller's mask.
 */
import { mergeFieldMasks, type FieldMask } from '../src/field-mask.js';
import { JsonMask } from './json-mask.js';
import { INITIAL_EVENTS_END_ANNOTATION } from './watch-list.js';

/** What list-watch.ts and watch-list.ts read of a listed object or a watch event's object. */
export const PROTOCOL_FIELDS: FieldMask = {
  kind: true,
  apiVersion: true,
  code: true,
  reason: true,
  message: true,
  details: true,
  metadata: { resourceVersion: true, annotations: { [INITIAL_EVENTS_END_ANNOTATION]: true } },
};

export interface WatchMasks {
  /** For one listed item. */
  readonly item: JsonMask;
  /** For one watch event line (`{"type":..,"object":..}`). */
  readonly event: JsonMask;
}

export function watchMasks(fields: FieldMask): WatchMasks {
  const object = mergeFieldMasks(fields, PROTOCOL_FIELDS);
  return { item: new JsonMask(object), event: new JsonMask({ type: true, object }) };
}
