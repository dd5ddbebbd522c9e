/**
 * Time as conndrain's long-running code sees it (the list/watch's backoff and relists, the
 * agent's holds, sessions and sweeps): injected everywhere timing matters so unit tests drive
 * it with a fake clock (`test/agent/fake-clock.ts`) instead of sleeping.
 */
export interface TimerHandle {
  cancel(): void;
}

export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  setInterval(fn: () => void, ms: number): TimerHandle;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const t = setTimeout(fn, ms);
    return { cancel: () => clearTimeout(t) };
  },
  setInterval(fn, ms) {
    const t = setInterval(fn, ms);
    return { cancel: () => clearInterval(t) };
  },
};

/** Resolves after `ms` on `clock`. */
export function sleep(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => clock.setTimeout(resolve, ms));
}
