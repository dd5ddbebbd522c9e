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

/**
 * Node's timers run on libuv's millisecond-truncated monotonic clock, so a timeout can fire a
 * millisecond before `Date.now()` says it is due: a drain of 2,000 ms would end after 1,999.
 * A timer that fires that little early is re-armed for the rest; a larger gap means the wall
 * clock moved, and the timer keeps the time it was given.
 */
const EARLY_FIRE_SLACK_MS = 5;

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const due = Date.now() + ms;
    let t: NodeJS.Timeout;
    const fire = (): void => {
      const left = due - Date.now();
      if (left > 0 && left <= EARLY_FIRE_SLACK_MS) {
        t = setTimeout(fire, left);
        return;
      }
      fn();
    };
    t = setTimeout(fire, ms);
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
