/**
 * A "node" network namespace whose nftables DNATs service addresses to "pod" addresses behind
 * a veth, as kube-proxy does: traffic sent from the node namespace to a service address makes
 * real conntrack entries with the DST_NAT status bit, reply source = the pod address:port.
 * One pod namespace answers on the veth's far side; other pod addresses in 10.X.0.0/24 have
 * no host (their entries exist all the same: conntrack confirms before ARP).
 */
import { execFileSync, spawnSync } from 'node:child_process';

export interface DnatRule {
  protocol: 'udp' | 'tcp';
  service: string;
  servicePort: number;
  target: string;
  targetPort: number;
}

function run(cmd: string, args: string[], input?: string): string {
  return execFileSync(cmd, args, { encoding: 'utf8', input, stdio: ['pipe', 'pipe', 'pipe'] });
}

export class DnatNode {
  readonly node: string;
  readonly pod: string;
  private readonly veth: string;

  constructor(readonly prefix: string, readonly subnet = 244) {
    this.node = `${prefix}node`;
    this.pod = `${prefix}pod`;
    this.veth = `${prefix.replace(/[^a-z0-9]/g, '').slice(-9)}v`;
  }

  /** Pod network 10.<subnet>.0.0/24: node side .1, pod namespace .2. */
  setup(rules: DnatRule[], sysctls: Record<string, string> = {}): void {
    this.cleanup();
    run('ip', ['netns', 'add', this.node]);
    run('ip', ['netns', 'add', this.pod]);
    run('ip', ['-n', this.node, 'link', 'add', `${this.veth}a`, 'type', 'veth', 'peer', 'name', `${this.veth}b`, 'netns', this.pod]);
    run('ip', ['-n', this.node, 'link', 'set', 'lo', 'up']);
    run('ip', ['-n', this.pod, 'link', 'set', 'lo', 'up']);
    run('ip', ['-n', this.node, 'addr', 'add', `10.${this.subnet}.0.1/24`, 'dev', `${this.veth}a`]);
    run('ip', ['-n', this.pod, 'addr', 'add', `10.${this.subnet}.0.2/24`, 'dev', `${this.veth}b`]);
    run('ip', ['-n', this.node, 'link', 'set', `${this.veth}a`, 'up']);
    run('ip', ['-n', this.pod, 'link', 'set', `${this.veth}b`, 'up']);
    run('ip', ['-n', this.node, 'route', 'add', 'default', 'via', `10.${this.subnet}.0.2`]);
    const lines = ['table ip cdnat {', ' chain out { type nat hook output priority -100; policy accept;'];
    for (const r of rules) lines.push(`  ip daddr ${r.service} ${r.protocol} dport ${r.servicePort} dnat to ${r.target}:${r.targetPort}`);
    lines.push(' }', '}');
    run('ip', ['netns', 'exec', this.node, 'nft', '-f', '-'], lines.join('\n'));
    for (const [name, value] of Object.entries(sysctls)) this.writeSysctl(name, value);
  }

  writeSysctl(name: string, value: string): void {
    run('ip', ['netns', 'exec', this.node, 'sh', '-c', `echo ${value} > /proc/sys/${name.replace(/\./g, '/')}`]);
  }

  /** `count` UDP datagrams from distinct source ports: `count` entries. */
  sendUdp(address: string, port: number, count = 1): void {
    run('ip', ['netns', 'exec', this.node, 'bash', '-c', `for i in $(seq ${count}); do echo x > /dev/udp/${address}/${port}; done`]);
  }

  /** `count` TCP connection attempts (SYN_SENT entries; nobody answers). */
  sendTcp(address: string, port: number, count = 1): void {
    spawnSync('ip', ['netns', 'exec', this.node, 'bash', '-c', `for i in $(seq ${count}); do timeout 0.2 bash -c 'echo x > /dev/tcp/${address}/${port}' 2>/dev/null; done; true`]);
  }

  /** Oracle independent of netlink-native: `conntrack -L` text in the node namespace. */
  conntrackText(): string {
    return spawnSync('ip', ['netns', 'exec', this.node, 'conntrack', '-L'], { encoding: 'utf8' }).stdout;
  }

  /** Entries whose reply source (the DNAT target) is this address and port, by the oracle. */
  entriesTo(target: string, port: number): number {
    return this.conntrackText().split('\n').filter((l) => {
      const reply = l.split(/\s+/).filter((f) => f.startsWith('src=') || f.startsWith('sport='));
      return reply[2] === `src=${target}` && reply[3] === `sport=${port}`;
    }).length;
  }

  cleanup(): void {
    spawnSync('ip', ['netns', 'del', this.node]);
    spawnSync('ip', ['netns', 'del', this.pod]);
  }
}
