import { isObject, objectAt, stringAt, type JsonObject } from './json.js';

/**
 * Pod helpers for injection: which containers exist, which are regular, which are native
 * sidecars. Ephemeral containers (`spec.ephemeralContainers`) are never looked at: they are
 * added to running pods for debugging and have no lifecycle hooks.
 */

/** A regular container and where it sits in `spec.containers`. */
export interface ContainerSlot {
  name: string;
  index: number;
  container: JsonObject;
}

/** `spec.containers` entries that are objects with a name, in order. */
export function regularContainers(spec: JsonObject): ContainerSlot[] {
  const list = spec['containers'];
  if (!Array.isArray(list)) return [];
  const out: ContainerSlot[] = [];
  list.forEach((container: unknown, index) => {
    const name = stringAt(container, 'name');
    if (isObject(container) && name !== undefined) out.push({ name, index, container });
  });
  return out;
}

/**
 * Native sidecars: init containers with `restartPolicy: Always` (Kubernetes >= 1.28). They run
 * beside the regular containers and are stopped after them; conndrain leaves them alone.
 */
export function nativeSidecarNames(spec: JsonObject): string[] {
  const list = spec['initContainers'];
  if (!Array.isArray(list)) return [];
  return list
    .filter((c: unknown) => stringAt(c, 'restartPolicy') === 'Always')
    .map((c: unknown) => stringAt(c, 'name'))
    .filter((n): n is string => n !== undefined);
}

/** Names of init containers that run to completion before the pod starts. */
export function plainInitContainerNames(spec: JsonObject): string[] {
  const list = spec['initContainers'];
  if (!Array.isArray(list)) return [];
  return list
    .filter((c: unknown) => stringAt(c, 'restartPolicy') !== 'Always')
    .map((c: unknown) => stringAt(c, 'name'))
    .filter((n): n is string => n !== undefined);
}

/** Only the string-valued annotations (anything else is not a valid annotation and is ignored). */
export function stringAnnotations(metadata: JsonObject | undefined): Record<string, string> {
  const raw = objectAt(metadata, 'annotations');
  const out: Record<string, string> = {};
  if (raw === undefined) return out;
  for (const [key, value] of Object.entries(raw)) if (typeof value === 'string') out[key] = value;
  return out;
}

/** `name`, or `generateName` followed by `*` for pods the API server has not named yet. */
export function displayName(metadata: JsonObject | undefined): string {
  const name = stringAt(metadata, 'name');
  if (name !== undefined && name !== '') return name;
  const generate = stringAt(metadata, 'generateName');
  return generate !== undefined && generate !== '' ? `${generate}*` : '<unnamed>';
}

/** The preStop handler of a container, if it has one. */
export function preStopOf(container: JsonObject): JsonObject | undefined {
  return objectAt(objectAt(container, 'lifecycle'), 'preStop');
}

/** `spec.terminationGracePeriodSeconds` when it is a whole non-negative number. */
export function graceSecondsOf(spec: JsonObject): number | undefined {
  const value = spec['terminationGracePeriodSeconds'];
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}

/**
 * The longest `preStop.sleep.seconds` among the containers not in `except` (regular ones and
 * native sidecars): hooks the pod keeps, which the grace period must still cover.
 */
export function longestKeptSleepSeconds(spec: JsonObject, except: ReadonlySet<number>): number {
  let longest = 0;
  const consider = (container: unknown): void => {
    const seconds = isObject(container) ? objectAt(preStopOf(container), 'sleep')?.['seconds'] : undefined;
    if (typeof seconds === 'number' && Number.isFinite(seconds) && seconds > longest) longest = Math.ceil(seconds);
  };
  const regular = spec['containers'];
  if (Array.isArray(regular)) regular.forEach((c: unknown, index) => (except.has(index) ? undefined : consider(c)));
  const init = spec['initContainers'];
  if (Array.isArray(init)) for (const c of init) if (stringAt(c, 'restartPolicy') === 'Always') consider(c);
  return longest;
}
