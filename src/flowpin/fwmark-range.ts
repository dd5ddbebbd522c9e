/**
 * The firewall marks conndrain may give its twin IPVS services.
 *
 * Default `0x0c000000/0xff000000` (value/mask: every mark whose top byte is 0x0c), chosen to
 * stay clear of the marks IPVS service proxies use on the same packets:
 * - kube-proxy: 0x4000 (KUBE-MARK-MASQ) and 0x8000 (KUBE-MARK-DROP);
 * - kube-router: DSR fwmark services `hash & 0x3FFF` (older releases), `| 1<<16` or, in newer
 *   ones, 16 bits with bits 14/15 moved to 16/17 and `| 1<<18` (generateFwmark in
 *   pkg/controllers/proxy), network-policy marks 0x10000/0x20000;
 * so no mark below 0x80000 is ours, and no IPVS fwmark service these proxies create can have a
 * top byte of 0x0c. Calico's default iptablesMarkMask (0xffff0000) does overlap: on Calico
 * clusters pick a range outside Calico's mask (`--fwmark-range`) or narrow Calico's mask.
 * Marks in the range that an existing non-conndrain IPVS fwmark service uses are skipped.
 *
 * Accepted forms: `VALUE/MASK` (marks m with m & MASK == VALUE) or `FIRST-LAST` (inclusive),
 * hex (0x...) or decimal. Mark 0 is never used (0 means "no mark" to IPVS).
 */
import { fail, ok, type Result } from '../result.js';

export interface FwmarkRange {
  first: number;
  last: number;
  /** As given (or the default), for logs and messages. */
  text: string;
}

export const DEFAULT_FWMARK_RANGE = '0x0c000000/0xff000000';

const U32_MAX = 0xffff_ffff;

function parseU32(text: string): number | undefined {
  const trimmed = text.trim();
  if (!/^(0x[0-9a-f]{1,8}|[0-9]{1,10})$/i.test(trimmed)) return undefined;
  const value = Number(trimmed);
  return Number.isInteger(value) && value >= 0 && value <= U32_MAX ? value : undefined;
}

export function formatMark(mark: number): string {
  return `0x${(mark >>> 0).toString(16).padStart(8, '0')}`;
}

export function parseFwmarkRange(text: string): Result<FwmarkRange, string> {
  const slash = text.indexOf('/');
  const dash = text.indexOf('-');
  if (slash >= 0) {
    const value = parseU32(text.slice(0, slash));
    const mask = parseU32(text.slice(slash + 1));
    if (value === undefined || mask === undefined) return fail(`fwmark range ${JSON.stringify(text)}: VALUE/MASK needs two 32-bit numbers (e.g. ${DEFAULT_FWMARK_RANGE})`);
    if (mask === 0) return fail(`fwmark range ${JSON.stringify(text)}: a zero mask would claim every mark`);
    if ((value & ~mask) >>> 0 !== 0) return fail(`fwmark range ${JSON.stringify(text)}: value ${formatMark(value)} has bits outside mask ${formatMark(mask)}`);
    const first = Math.max(value, 1);
    const last = (value | (~mask >>> 0)) >>> 0;
    // A mask with holes (non-contiguous) still yields a range only when the free bits are the low ones.
    if ((((~mask >>> 0) + 1) & ~mask) >>> 0 !== 0) return fail(`fwmark range ${JSON.stringify(text)}: the mask's free bits must be the low bits (e.g. 0xff000000)`);
    if (last < first) return fail(`fwmark range ${JSON.stringify(text)} is empty`);
    return ok({ first, last, text });
  }
  if (dash > 0) {
    const first = parseU32(text.slice(0, dash));
    const last = parseU32(text.slice(dash + 1));
    if (first === undefined || last === undefined) return fail(`fwmark range ${JSON.stringify(text)}: FIRST-LAST needs two 32-bit numbers`);
    if (first === 0) return fail(`fwmark range ${JSON.stringify(text)}: mark 0 means "no mark" to IPVS; start at 1 or above`);
    if (last < first) return fail(`fwmark range ${JSON.stringify(text)}: last is below first`);
    return ok({ first, last, text });
  }
  return fail(`fwmark range ${JSON.stringify(text)}: use VALUE/MASK (e.g. ${DEFAULT_FWMARK_RANGE}) or FIRST-LAST`);
}

export function inRange(range: FwmarkRange, mark: number): boolean {
  return mark >= range.first && mark <= range.last;
}

/**
 * Marks for the wanted ids: an id keeps the mark it has now (stable across passes and agent
 * restarts, so a twin is never re-created under another mark); new ids take the lowest mark
 * of the range that is neither taken by another id nor used by a foreign fwmark service.
 * Ids are visited sorted, so the result does not depend on input order. Ids that find no free
 * mark are returned in `exhausted`.
 */
export function allocateMarks(
  range: FwmarkRange,
  wanted: readonly string[],
  current: ReadonlyMap<string, number>,
  foreign: ReadonlySet<number>,
): { marks: Map<string, number>; exhausted: string[] } {
  const ids = [...new Set(wanted)].sort();
  const marks = new Map<string, number>();
  const taken = new Set<number>(foreign);
  for (const id of ids) {
    const mark = current.get(id);
    if (mark !== undefined && inRange(range, mark) && !taken.has(mark)) {
      marks.set(id, mark);
      taken.add(mark);
    }
  }
  const exhausted: string[] = [];
  let next = range.first;
  for (const id of ids) {
    if (marks.has(id)) continue;
    while (next <= range.last && taken.has(next)) next++;
    if (next > range.last) {
      exhausted.push(id);
      continue;
    }
    marks.set(id, next);
    taken.add(next);
    next++;
  }
  return { marks, exhausted };
}
