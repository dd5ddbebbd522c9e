/**
 * Zero-gap handover needs the kernel to move connections that wait in a closing listener's
 * accept queue to another listener of its SO_REUSEPORT group (`net.ipv4.tcp_migrate_req`,
 * Linux 5.14+). Without it, a drain call that completed its handshake on the old agent's socket
 * just before that socket closed is reset, and the kubelet ends the hook at once. kube-proxy
 * sets the node sysctls it depends on the same way; this one is per network namespace, and the
 * agent runs in the node's.
 */
import { readFile, writeFile } from 'node:fs/promises';
import type { Logger } from 'pino';

export const TCP_MIGRATE_REQ = '/proc/sys/net/ipv4/tcp_migrate_req';

export type AcceptMigration = 'on' | 'enabled' | 'unavailable';

/** Turns the sysctl on where it is off; says what it found. Never throws. */
export async function enableAcceptMigration(log: Logger, path: string = TCP_MIGRATE_REQ): Promise<AcceptMigration> {
  let value: string;
  try {
    value = (await readFile(path, 'utf8')).trim();
  } catch (error) {
    log.warn({ err: error, sysctl: path }, 'handover: this kernel has no tcp_migrate_req (Linux < 5.14); a drain call queued on this agent\'s socket as it closes on SIGTERM may be reset');
    return 'unavailable';
  }
  if (value === '1') return 'on';
  try {
    await writeFile(path, '1\n');
    log.info({ sysctl: path }, 'handover: set net.ipv4.tcp_migrate_req=1 so calls queued on a closing listener move to the next agent');
    return 'enabled';
  } catch (error) {
    log.warn({ err: error, sysctl: path }, 'handover: could not set net.ipv4.tcp_migrate_req=1 (read-only /proc/sys?); a drain call queued on this agent\'s socket as it closes on SIGTERM may be reset');
    return 'unavailable';
  }
}
