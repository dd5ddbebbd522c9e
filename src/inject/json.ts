/**
 * Defensive readers for JSON that came from outside (an AdmissionReview, a manifest file, the
 * agent's state file, an nft listing): nothing here trusts a shape it did not check, so
 * injection never throws on odd input.
 */
export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether the text of a manifest is JSON (parsed as JSON, not YAML): its first non-blank character opens an object or an array. */
export function looksLikeJson(text: string): boolean {
  const first = text.trimStart()[0];
  return first === '{' || first === '[';
}

/** The object at `key`, or undefined when absent or not an object. */
export function objectAt(parent: unknown, key: string): JsonObject | undefined {
  if (!isObject(parent)) return undefined;
  const value = parent[key];
  return isObject(value) ? value : undefined;
}

/** The string at `key`, or undefined. */
export function stringAt(parent: unknown, key: string): string | undefined {
  if (!isObject(parent)) return undefined;
  const value = parent[key];
  return typeof value === 'string' ? value : undefined;
}

/** Structural equality for JSON values (key order does not matter). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const keysA = Object.keys(a).filter((k) => a[k] !== undefined);
    const keysB = Object.keys(b).filter((k) => b[k] !== undefined);
    return keysA.length === keysB.length && keysA.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}

/**
 * A shallow copy of `source` with `changes` set on it (existing keys keep their place, new
 * ones come last: the same key order as `{ ...source, ...changes }`).
 *
 * Object.assign instead of spread syntax: V8 (Node 20) leaves its fast clone path for
 * `{ ...parsed, newKey }` when the source came from JSON.parse and gains keys, and such a
 * spread of a container costs about ten times this copy (figures: docs/benchmarks.md, webhook).
 * Object.assign *sets* keys, so an own `__proto__` key (possible in untrusted JSON) would
 * hit the prototype setter instead of being copied; such objects take the spread.
 */
export function copyWith(source: JsonObject | undefined, changes: JsonObject): JsonObject {
  if (source === undefined) return Object.assign({}, changes);
  if (Object.hasOwn(source, '__proto__') || Object.hasOwn(changes, '__proto__')) return { ...source, ...changes };
  return Object.assign({}, source, changes);
}
