import { randomBytes } from 'node:crypto';

/** Every lab namespace is named `cdl-<pid>-<run>-<logical>`: unique per run, sweepable when the pid is dead. */
export const LAB_NETNS_PREFIX = 'cdl-';

export function makeRunPrefix(pid: number = process.pid): string {
  return `${LAB_NETNS_PREFIX}${pid}-${randomBytes(2).toString('hex')}-`;
}

/** Parses the owner pid out of a lab namespace name; undefined for other namespaces. */
export function ownerPidOf(netnsName: string): number | undefined {
  const match = /^cdl-(\d+)-[0-9a-f]{4}-/.exec(netnsName);
  return match === null ? undefined : Number(match[1]);
}
