import type { ChartSpec, LineSeries } from '../chart/line-chart.js';
import type { GhostRun } from '../scenarios/ghost.js';
import { renderTable } from './table.js';

/** Both runs of the ghost scenario; `with` is absent when the agent could not run. */
export interface GhostResult {
  without: GhostRun;
  with: GhostRun | { skipped: string };
  drainSeconds: number;
}

export function isRun(value: GhostRun | { skipped: string }): value is GhostRun {
  return !('skipped' in value);
}

const seconds = (value: number | null, suffix = ''): string => (value === null ? 'n/a' : `${value.toFixed(2)} s${suffix}`);

function udpFailure(run: GhostRun): string {
  return run.recovered ? seconds(run.failureSeconds) : `> ${run.windowSeconds.toFixed(1)} s (still failing)`;
}

function column(run: GhostRun | { skipped: string }): string[] {
  if (!isRun(run)) return Array<string>(10).fill(`skipped: ${run.skipped}`);
  return [
    udpFailure(run),
    `${run.lostQueries}${run.lostAfterRecovery > 0 ? ` (${run.lostAfterRecovery} after recovering)` : ''}`,
    String(run.packetsToDeadIp),
    run.packetsToDeadIp === 0 ? 'none' : seconds(run.deadIpTrafficSeconds),
    String(run.otherPodLostQueries),
    `${run.otherPodEntries.kept} of ${run.otherPodEntries.before}`,
    run.tcp.firstFailureSeconds === null ? 'none' : `${seconds(run.tcp.firstFailureSeconds)} (${run.tcp.failureKind})`,
    run.tcp.recoveredSeconds === null ? 'not within window' : seconds(run.tcp.recoveredSeconds),
    String(run.tcp.otherPodFailures),
    `${(run.tcp.bytesDelivered / 1024).toFixed(0)} KiB`,
  ];
}

const ROWS = [
  'UDP flows of the deleted pod failing for',
  'UDP queries lost (those flows)',
  'packets still sent to the dead IP',
  'last packet to the dead IP after deletion',
  'UDP queries lost by the other pod\'s flows',
  'other pod\'s conntrack entries left untouched',
  'TCP streams of the deleted pod: first failure',
  'TCP streams answered again (new connection)',
  'TCP failures of the other pod\'s streams',
  'TCP bytes delivered (all streams)',
];

export function renderGhostTable(result: GhostResult): string {
  const without = column(result.without);
  const withConndrain = column(result.with);
  return renderTable(
    ['ghost (scale-down, pod deleted at t=0)', 'without conndrain', 'with conndrain'],
    ROWS.map((row, index) => [row, without[index] ?? '', withConndrain[index] ?? '']),
  );
}

/** The ghost chart: answered UDP queries and TCP requests per bucket, both runs, around the deletion. */
export function ghostChart(result: GhostResult): ChartSpec {
  const runs = [result.without, result.with].filter(isRun);
  const color = (run: GhostRun): string => (run.conndrain ? '#1f77b4' : '#d62728');
  const label = (run: GhostRun): string => (run.conndrain ? 'with conndrain' : 'without conndrain');
  const series = (kind: 'udp' | 'tcp'): LineSeries[] =>
    runs.map((run) => ({ label: label(run), color: color(run), x: run.series[kind].startSeconds, y: run.series[kind].answered, step: run.series[kind].bucketMs / 1000 }));
  const markers = [
    { x: -result.drainSeconds, label: 'unready', color: '#8c8c8c' },
    { x: 0, label: 'deleted', color: '#000000' },
  ];
  return {
    title: 'Ghost conntrack after a scale-down',
    subtitle: 'ClusterIP, 2 pods, kube-proxy nft DNAT; pod-1-2 deleted at t=0; 250 ms buckets',
    panels: [
      { title: 'UDP (DNS-like) queries answered per 250 ms', xLabel: 'seconds since the pod was deleted', series: series('udp'), markers },
      { title: 'TCP stream requests answered per 250 ms', xLabel: 'seconds since the pod was deleted', series: series('tcp'), markers },
    ],
  };
}

/** The `--json` line: figures only, no series. */
export function ghostJson(result: GhostResult): Record<string, unknown> {
  const strip = (run: GhostRun | { skipped: string }): unknown => {
    if (!isRun(run)) return run;
    const { series: _series, ...figures } = run;
    return figures;
  };
  return { without: strip(result.without), with: strip(result.with) };
}
