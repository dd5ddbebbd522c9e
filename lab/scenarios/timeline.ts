/** Small timing helpers for scenarios. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}
