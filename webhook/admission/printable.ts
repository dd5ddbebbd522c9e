/**
 * What the API server accepts as text from a webhook, checked and enforced in one place.
 *
 * Warnings: the API server turns each into a `Warning: 299 - "..."` header with
 * k8s.io/apimachinery/pkg/util/net NewWarningHeader, which refuses (and the warning is then
 * silently dropped) any text that is not valid UTF-8 or contains a rune for which Go's
 * unicode.IsControl is true: C0 (U+0000-U+001F), DEL (U+007F) and C1 (U+0080-U+009F). Its
 * warning recorder (k8s.io/apiserver pkg/endpoints/filters/warning.go) drops duplicates and,
 * once the warnings of a request pass 4096 runes in total, cuts each further one to 256 runes.
 * Status messages are not checked that way, but they reach `kubectl` and the logs; they get
 * the same treatment and a bound of their own.
 */
import { isControl } from '../../src/quote.js';

/** Total runes of warnings per request before the API server starts truncating them. */
export const WARNINGS_TOTAL_MAX = 4096;
/** One warning, in runes (well above any conndrain warning with its values bounded). */
export const WARNING_MAX = 1024;
/** A deny or refusal message, in runes. */
export const MESSAGE_MAX = 2048;

/** A string iteration step that is half a surrogate pair: no UTF-8 encoding exists for it. */
function isLoneSurrogate(ch: string, code: number): boolean {
  return ch.length === 1 && code >= 0xd800 && code <= 0xdfff;
}

/**
 * Why NewWarningHeader would refuse this text, or undefined when it accepts it. A JavaScript
 * string is sent as UTF-8; only a lone surrogate cannot be encoded (it becomes U+FFFD on the
 * wire at best), so it counts as invalid UTF-8 here.
 */
export function warningTextProblem(text: string): string | undefined {
  let index = 0;
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0;
    if (isLoneSurrogate(ch, code)) return `a lone surrogate U+${code.toString(16).toUpperCase()} at ${index} is not valid UTF-8`;
    if (isControl(code)) return `control character U+${code.toString(16).toUpperCase().padStart(4, '0')} at ${index}`;
    index += ch.length;
  }
  return undefined;
}

/** Runes (code points), as Go's utf8.RuneCountInString counts them. */
export function runeCount(text: string): number {
  let count = 0;
  for (const ch of text) {
    count++;
    void ch;
  }
  return count;
}

/**
 * One printable line of at most `max` runes: control characters become spaces, lone
 * surrogates U+FFFD, and a longer text is cut with its length said.
 */
export function printableLine(text: string, max: number): string {
  let out = '';
  let count = 0;
  for (const ch of text) {
    count++;
    if (count > max) continue;
    const code = ch.codePointAt(0) ?? 0;
    if (isLoneSurrogate(ch, code)) out += '\ufffd';
    else out += isControl(code) ? ' ' : ch;
  }
  if (count <= max) return out;
  // Cut again to leave room for the note, so the result itself stays within `max`.
  const note = `… (cut, ${count} characters in all)`;
  return `${Array.from(out).slice(0, Math.max(0, max - note.length)).join('')}${note}`;
}

/**
 * The warnings as the API server will pass them on, none dropped or cut by it: each printable
 * and bounded, duplicates removed, and no more than fit in WARNINGS_TOTAL_MAX runes (the rest
 * summed up in a last warning).
 */
export function boundWarnings(warnings: readonly string[]): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  let total = 0;
  const reserve = 80;
  let left = 0;
  for (const warning of warnings) {
    const line = printableLine(warning, WARNING_MAX);
    if (line === '' || seen.has(line)) continue;
    const runes = runeCount(line);
    if (left > 0 || total + runes > WARNINGS_TOTAL_MAX - reserve) {
      left++;
      continue;
    }
    seen.add(line);
    out.push(line);
    total += runes;
  }
  if (left > 0) out.push(`conndrain: ${left} more warning(s) left out to stay within what the API server passes on`);
  return out;
}

/** A deny or refusal message: printable, bounded. */
export function boundMessage(message: string): string {
  return printableLine(message, MESSAGE_MAX);
}
