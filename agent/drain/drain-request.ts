/**
 * What a drain API request asks for, read from its raw request target without ever throwing:
 * origin-form (`/v1/drain/<id>?query`), absolute-form (`http://host/v1/drain/<id>`), `*` and
 * anything else a client may send. The drain id is percent-decoded; a malformed encoding is a
 * client error with a sentence, not an exception. No path normalisation: `/v1/drain/../x` is
 * simply not a drain id.
 */
import { DRAIN_API_PREFIX } from '../../src/contract.js';

export type DrainTarget =
  | { kind: 'drain'; drainId: string }
  | { kind: 'not-a-drain-id'; text: string }
  | { kind: 'other-path'; path: string }
  | { kind: 'bad'; why: string };

/** Longest value echoed back in an answer or a log line. */
export const ECHO_LIMIT = 128;

const DRAIN_ID = /^[A-Za-z0-9._-]{1,128}$/;
const ABSOLUTE_FORM = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/;

/** `text` cut to `ECHO_LIMIT` characters (marked when cut), for answers and logs. */
export function bounded(text: string): string {
  return text.length <= ECHO_LIMIT ? text : `${text.slice(0, ECHO_LIMIT)}…(${text.length} chars)`;
}

/** The path of a request target: query and fragment dropped, absolute-form reduced to its path. */
function pathOf(target: string): string | undefined {
  const end = target.search(/[?#]/);
  let path = end < 0 ? target : target.slice(0, end);
  const absolute = ABSOLUTE_FORM.exec(path);
  if (absolute !== null) path = path.slice(absolute[0].length) || '/';
  return path.startsWith('/') ? path : undefined;
}

function decode(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

export function parseDrainTarget(rawTarget: string | undefined): DrainTarget {
  const target = rawTarget ?? '';
  const path = pathOf(target);
  if (path === undefined) return { kind: 'bad', why: `the request target ${JSON.stringify(bounded(target))} is not a path (expected GET ${DRAIN_API_PREFIX}/<drain-id>)` };
  const prefix = `${DRAIN_API_PREFIX}/`;
  if (!path.startsWith(prefix)) return { kind: 'other-path', path: bounded(path) };
  const encoded = path.slice(prefix.length);
  const drainId = decode(encoded);
  if (drainId === undefined) return { kind: 'bad', why: `the drain id ${JSON.stringify(bounded(encoded))} is not valid percent-encoding (a % must be followed by two hex digits forming UTF-8)` };
  if (!DRAIN_ID.test(drainId)) return { kind: 'not-a-drain-id', text: bounded(drainId) };
  return { kind: 'drain', drainId };
}
