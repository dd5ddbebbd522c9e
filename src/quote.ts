/**
 * How a value from user input appears in a message: in double quotes, control characters
 * written as `\uXXXX`, and cut to its first `max` characters with its length said when longer
 * (`"abcd…" (1048576 characters)`). Annotations reach the webhook before the API server checks
 * their size, so a value can be megabytes; a message must stay a line a person can read.
 */
export const QUOTED_VALUE_MAX = 64;

/** C0, DEL and C1 (U+0080-U+009F): Go's unicode.IsControl. */
export function isControl(code: number): boolean {
  return code < 0x20 || (code >= 0x7f && code <= 0x9f);
}

export function quoteValue(value: string, max = QUOTED_VALUE_MAX): string {
  let shown = '';
  let count = 0;
  for (const ch of value) {
    count++;
    if (count > max) continue;
    const code = ch.codePointAt(0) ?? 0;
    shown += isControl(code) ? `\\u${code.toString(16).padStart(4, '0')}` : ch;
  }
  return count > max ? `"${shown}…" (${count} characters)` : `"${shown}"`;
}
