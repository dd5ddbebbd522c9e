/**
 * A field mask: which parts of a JSON value to keep. `true` keeps the value whole; an object
 * keeps, of an object at that position, only the listed keys (each with its own mask), and
 * applies itself to every element of an array there; any other value there is kept whole.
 * A key ending in `*` matches every key with that prefix (an exact key wins over a prefix, a
 * longer prefix over a shorter one).
 *
 * Used to decode only what a watcher reads (kube/json-mask.ts applies it to the bytes before
 * JSON.parse), so the fields it drops are never built as JS values. The key lookup is
 * declared there once (`keyMask`): src/ only declares masks.
 */
export type FieldMask = true | { readonly [key: string]: FieldMask };

/** A mask keeping what either keeps. */
export function mergeFieldMasks(a: FieldMask, b: FieldMask): FieldMask {
  if (a === true || b === true) return true;
  const out: Record<string, FieldMask> = {};
  for (const [k, v] of Object.entries(a)) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  for (const [k, v] of Object.entries(b)) {
    const merged = Object.hasOwn(out, k) ? mergeFieldMasks(out[k] as FieldMask, v) : v;
    Object.defineProperty(out, k, { value: merged, enumerable: true, writable: true, configurable: true });
  }
  return out;
}
