/**
 * Reads the signals of an eBPF datapath on this node (src/flow-visibility.ts judges them):
 * the network interface names (`<sysRoot>/class/net`, the namespace the process runs in: the
 * node's, as the agent is hostNetwork) and the names pinned under
 * `<bpfRoot>/tc/globals` (where Cilium and Calico pin their maps; the DaemonSet may or may not
 * mount /sys/fs/bpf, so a missing directory is no signal, not an error). No shelling out.
 * Everything is injectable for tests: the roots, or the listers themselves.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { resolveFlowVisibility, type DatapathSignals, type FlowVisibility, type FlowVisibilityMode } from '../../src/flow-visibility.js';

export interface DatapathProbeOptions {
  /** Where sysfs is mounted (default /sys). */
  sysRoot?: string;
  /** Where the BPF filesystem is mounted (default <sysRoot>/fs/bpf). */
  bpfRoot?: string;
  /** Lists interface names (default: the entries of <sysRoot>/class/net). */
  listLinks?: () => Promise<string[]>;
  /** Lists pinned names (default: the entries of <bpfRoot>/tc/globals, none when absent). */
  listBpfPins?: () => Promise<string[]>;
}

async function entriesOf(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch {
    return [];
  }
}

/** The datapath signals, or undefined when not even the interfaces could be listed. */
export async function readDatapathSignals(options: DatapathProbeOptions = {}): Promise<DatapathSignals | undefined> {
  const sysRoot = options.sysRoot ?? '/sys';
  const bpfRoot = options.bpfRoot ?? join(sysRoot, 'fs', 'bpf');
  let links: string[];
  try {
    links = await (options.listLinks ?? (() => readdir(join(sysRoot, 'class', 'net'))))();
  } catch {
    return undefined;
  }
  const bpfPins = await (options.listBpfPins ?? (() => entriesOf(join(bpfRoot, 'tc', 'globals'))))();
  return { links, bpfPins };
}

/** The --flow-visibility verdict: the flag when it is conntrack or none, the probe when auto. */
export async function probeFlowVisibility(mode: FlowVisibilityMode, options: DatapathProbeOptions = {}): Promise<FlowVisibility> {
  if (mode !== 'auto') return resolveFlowVisibility(mode, undefined);
  return resolveFlowVisibility(mode, await readDatapathSignals(options));
}
