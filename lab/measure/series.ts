import type { TrafficLine } from '../traffic/wire.js';

/** Requests per time bucket around an event, for the chart and the results file. */
export interface Series {
  bucketMs: number;
  /** Start of each bucket, in seconds relative to the event (negative before it). */
  startSeconds: number[];
  answered: number[];
  lost: number[];
}

/** Buckets the UDP queries (`k: 'u'`) or TCP requests (`k: 't'`) by when they were sent. */
export function bucketRequests(lines: readonly TrafficLine[], kind: 'u' | 't', t0: number, fromSeconds: number, toSeconds: number, bucketMs: number): Series {
  const count = Math.max(1, Math.ceil(((toSeconds - fromSeconds) * 1000) / bucketMs));
  const series: Series = {
    bucketMs,
    startSeconds: Array.from({ length: count }, (_, index) => Math.round((fromSeconds + (index * bucketMs) / 1000) * 1000) / 1000),
    answered: new Array<number>(count).fill(0),
    lost: new Array<number>(count).fill(0),
  };
  for (const line of lines) {
    if (line.k !== kind) continue;
    const index = Math.floor((line.t - t0 - fromSeconds * 1000) / bucketMs);
    if (index < 0 || index >= count) continue;
    if (line.ok) series.answered[index] = (series.answered[index] ?? 0) + 1;
    else series.lost[index] = (series.lost[index] ?? 0) + 1;
  }
  return series;
}
