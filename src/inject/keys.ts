import { DOMAIN, KEYS_OF_OTHER_KINDS, KNOWN_POD_ANNOTATIONS, LABEL_MANAGED, RETIRED_POD_ANNOTATIONS, USER_ANNOTATIONS } from '../contract.js';
import { quoteValue } from '../quote.js';
import { objectAt, type JsonObject } from './json.js';

/**
 * The keys of a pod's (or pod template's) metadata checked against the contract: a misspelt
 * annotation would otherwise be ignored in silence, while a misspelt value is denied. Reasons
 * come back as data; the injector turns them into warnings for the webhook's
 * AdmissionResponse and for `conndrain inject`'s stderr alike.
 */
export type KeyProblemCode =
  /** A `conndrain.io/*` annotation (or a near miss of the domain) that the contract does not know. */
  | 'unknown-annotation'
  /** A user annotation written as a label: conndrain reads annotations only. */
  | 'annotation-as-label'
  /** A retired annotation, with what replaces it. */
  | 'retired-annotation'
  /** A Namespace or Service label set on a pod, where conndrain never reads it. */
  | 'wrong-object';

export interface KeyProblem {
  code: KeyProblemCode;
  key: string;
  /** The closest known key, when one is close enough to be what was meant. */
  suggestion?: string;
  message: string;
}

/** Keys longer than this are not looked at (the API server caps a key at 253 + 1 + 63). */
const MAX_KEY_LENGTH = 317;
/** At most this many problems per object: a pod cannot flood a warning list. */
export const MAX_KEY_PROBLEMS = 5;
/** A suggestion is made when the closest known key is at most this many edits away. */
const MAX_SUGGESTION_DISTANCE = 3;

/**
 * Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
 * neighbours each cost 1 (`drian` is one edit from `drain`, not two).
 */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const row = d[i] as number[];
      const above = d[i - 1] as number[];
      let best = Math.min((above[j] as number) + 1, (row[j - 1] as number) + 1, (above[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, ((d[i - 2] as number[])[j - 2] as number) + 1);
      row[j] = best;
    }
  }
  return (d[rows - 1] as number[])[cols - 1] as number;
}

/** The known key closest to `key`, with its distance (ties: the first in contract order). */
export function closestKey(key: string, known: readonly string[] = KNOWN_POD_ANNOTATIONS): { key: string; distance: number } | undefined {
  let best: { key: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(key, candidate);
    if (best === undefined || distance < best.distance) best = { key: candidate, distance };
  }
  return best;
}

/** `conndrain.io/...`, or a prefix a couple of edits from it (`condrain.io/`, `conndrain.com/`). */
function looksLikeOurs(key: string): boolean {
  const slash = key.indexOf('/');
  if (slash <= 0) return false;
  const prefix = key.slice(0, slash);
  return prefix === DOMAIN || editDistance(prefix, DOMAIN) <= 2;
}

function unknownAnnotation(key: string): KeyProblem {
  const shown = quoteValue(key);
  const closest = closestKey(key);
  if (closest !== undefined && closest.distance <= MAX_SUGGESTION_DISTANCE) {
    return { code: 'unknown-annotation', key, suggestion: closest.key, message: `unknown annotation ${shown} is ignored; did you mean ${closest.key}?` };
  }
  return { code: 'unknown-annotation', key, message: `unknown annotation ${shown} is ignored; conndrain reads ${USER_ANNOTATIONS.join(', ')}` };
}

function wrongObject(key: string, where: 'annotation' | 'label'): KeyProblem | undefined {
  const kind = KEYS_OF_OTHER_KINDS[key];
  if (kind === undefined) return undefined;
  return { code: 'wrong-object', key, message: `${key} is a ${kind} label; as a pod ${where} it has no effect: label the ${kind} instead` };
}

function stringKeys(object: JsonObject | undefined): string[] {
  if (object === undefined) return [];
  return Object.keys(object).filter((k) => k.length <= MAX_KEY_LENGTH);
}

/** What is wrong with the conndrain keys of a pod's or template's metadata; empty when nothing is. */
export function checkKeys(metadata: JsonObject | undefined): KeyProblem[] {
  const problems: KeyProblem[] = [];
  for (const key of stringKeys(objectAt(metadata, 'annotations'))) {
    if (KNOWN_POD_ANNOTATIONS.includes(key)) continue;
    const retired = RETIRED_POD_ANNOTATIONS[key];
    const misplaced = wrongObject(key, 'annotation');
    if (retired !== undefined) problems.push({ code: 'retired-annotation', key, message: `annotation ${key} is retired: ${retired}` });
    else if (misplaced !== undefined) problems.push(misplaced);
    else if (looksLikeOurs(key)) problems.push(unknownAnnotation(key));
  }
  for (const key of stringKeys(objectAt(metadata, 'labels'))) {
    if (key === LABEL_MANAGED || !looksLikeOurs(key)) continue;
    const misplaced = wrongObject(key, 'label');
    if (misplaced !== undefined) {
      problems.push(misplaced);
      continue;
    }
    const closest = closestKey(key, USER_ANNOTATIONS);
    if (closest !== undefined && closest.distance <= MAX_SUGGESTION_DISTANCE) {
      problems.push({ code: 'annotation-as-label', key, suggestion: closest.key, message: `${quoteValue(key)} is set as a label; conndrain reads annotations only: write it as the annotation ${closest.key}` });
    }
  }
  if (problems.length <= MAX_KEY_PROBLEMS) return problems;
  const kept = problems.slice(0, MAX_KEY_PROBLEMS - 1);
  const rest = problems.length - kept.length;
  return [...kept, { code: 'unknown-annotation', key: '', message: `and ${rest} more conndrain.io keys that conndrain does not know` }];
}

/** The problems as warning sentences, prefixed like every other injection warning. */
export function keyWarnings(problems: readonly KeyProblem[]): string[] {
  return problems.map((p) => `conndrain: ${p.message}`);
}
