/**
 * Drain ids: 128 random bits, 32 lowercase hex characters. They name a pod in the agent's
 * drain API because at admission a pod may have neither a name (generateName) nor a UID.
 * `src/` does no I/O, so the random bytes come from the caller (crypto.randomBytes in the
 * webhook and CLI, a seeded source in tests).
 */
export type RandomSource = (byteCount: number) => Uint8Array;

export const DRAIN_ID_BYTES = 16;
const DRAIN_ID_PATTERN = /^[0-9a-f]{32}$/;

export function isDrainId(value: unknown): boolean {
  return typeof value === 'string' && DRAIN_ID_PATTERN.test(value);
}

export function newDrainId(random: RandomSource): string {
  const bytes = random(DRAIN_ID_BYTES);
  let hex = '';
  for (let i = 0; i < DRAIN_ID_BYTES; i++) hex += (bytes[i] ?? 0).toString(16).padStart(2, '0');
  return hex;
}

/** A deterministic source for tests and fixtures: byte i of call n is a simple function of (seed, n, i). */
export function seededRandom(seed: number): RandomSource {
  let state = (seed >>> 0) || 1;
  return (count) => {
    const out = new Uint8Array(count);
    for (let i = 0; i < count; i++) {
      // xorshift32: enough for distinct, reproducible ids; never used in production.
      state ^= state << 13;
      state >>>= 0;
      state ^= state >>> 17;
      state ^= state << 5;
      state >>>= 0;
      out[i] = state & 0xff;
    }
    return out;
  };
}
