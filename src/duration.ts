import { fail, ok, type Result } from './result.js';
import { quoteValue } from './quote.js';

/**
 * Parses a duration the way the annotations accept it: Go style (`30s`, `1m30s`, `2m`,
 * `1h`, `500ms`, `1.5s`) or plain seconds (`45`). Returns milliseconds; never throws.
 * Negative values and unknown units are rejected with a sentence saying what is accepted.
 */
const UNIT_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

const PLAIN_SECONDS = /^\d+(\.\d+)?$/;
const GO_DURATION = /^(\d+(\.\d+)?(ms|h|m|s))+$/;
const GO_PART = /(\d+(?:\.\d+)?)(ms|h|m|s)/g;

export const DURATION_HINT = 'a duration like 30s, 1m30s, 2m or a whole number of seconds like 45';

export function parseDurationMs(text: string): Result<number, string> {
  const value = text.trim();
  if (value === '') return fail(`empty value; expected ${DURATION_HINT}`);
  if (value.startsWith('-')) return fail(`negative duration ${quoteValue(value)}; expected ${DURATION_HINT}`);
  if (PLAIN_SECONDS.test(value)) return ok(Math.round(Number(value) * 1000));
  if (!GO_DURATION.test(value)) return fail(`${quoteValue(value)} is not a duration; expected ${DURATION_HINT}`);
  let total = 0;
  for (const match of value.matchAll(GO_PART)) {
    const amount = Number(match[1]);
    const unit = UNIT_MS[match[2] ?? 's'] ?? 1000;
    total += amount * unit;
  }
  if (!Number.isFinite(total)) return fail(`${quoteValue(value)} is too large; expected ${DURATION_HINT}`);
  return ok(Math.round(total));
}

/** Formats milliseconds as a short Go-style duration (`1m30s`, `45s`, `500ms`). */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const totalSeconds = Math.floor(ms / 1000);
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor((totalSeconds % 3600) / 60);
  const seconds = totalSeconds % 60;
  let out = '';
  if (hours > 0) out += `${hours}h`;
  if (minutes > 0) out += `${minutes}m`;
  if (seconds > 0 || out === '') out += `${seconds}s`;
  return out;
}
