import type { CpuCounters } from './readings.js';

/**
 * Parses `/proc/net/stat/nf_conntrack`: a header of column names, then one line of hex
 * numbers per possible CPU. Columns are found by name (their set changed between kernels).
 * Returns undefined when the header lacks the columns.
 */
export function parseConntrackStat(text: string): CpuCounters[] | undefined {
  const lines = text.split('\n').map((l) => l.trim()).filter((l) => l !== '');
  const header = lines[0]?.split(/\s+/);
  if (header === undefined) return undefined;
  const col = (name: string): number => header.indexOf(name);
  const insertFailed = col('insert_failed');
  const drop = col('drop');
  const earlyDrop = col('early_drop');
  if (insertFailed < 0 || drop < 0 || earlyDrop < 0) return undefined;
  return lines.slice(1).map((line, cpu) => {
    const values = line.split(/\s+/).map((v) => parseInt(v, 16));
    return { cpu, insertFailed: values[insertFailed] ?? 0, drop: values[drop] ?? 0, earlyDrop: values[earlyDrop] ?? 0 };
  });
}

/** Sum of a metric's samples in Prometheus text format, undefined when absent. */
export function sumMetric(text: string, name: string): number | undefined {
  let sum: number | undefined;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    let rest = line.slice(name.length);
    if (rest.startsWith('{')) rest = rest.slice(rest.lastIndexOf('}') + 1);
    else if (!rest.startsWith(' ')) continue;
    const value = Number(rest.trim().split(/\s+/)[0]);
    if (Number.isFinite(value)) sum = (sum ?? 0) + value;
  }
  return sum;
}
