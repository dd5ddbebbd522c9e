/** Test support: network namespaces for the conntrack kernel tests (unique prefix per process). */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';

export const PREFIX = `cdct-${process.pid}-`;
let counter = 0;
const created = new Set<string>();

export function isRoot(): boolean {
  return process.getuid?.() === 0;
}

export function sh(cmd: string, args: string[], input?: string): string {
  return execFileSync(cmd, args, { encoding: 'utf8', input, stdio: ['pipe', 'pipe', 'pipe'], maxBuffer: 1 << 28 });
}

export function addNetns(tag: string): string {
  const name = `${PREFIX}${tag}${counter++}`;
  sh('ip', ['netns', 'add', name]);
  created.add(name);
  sh('ip', ['-n', name, 'link', 'set', 'lo', 'up']);
  return name;
}

export function deleteNetns(name: string): void {
  created.delete(name);
  try {
    sh('ip', ['netns', 'del', name]);
  } catch {
    // already gone
  }
}

export function deleteAllNetns(): void {
  for (const name of [...created]) deleteNetns(name);
}

export function inNetns(ns: string, cmd: string, args: string[], input?: string): string {
  return sh('ip', ['netns', 'exec', ns, cmd, ...args], input);
}

/** `conntrack -L` in a namespace, both families, as entry keys (see entryKey in the contract). */
export function conntrackCliKeys(ns: string): string[] {
  const keys: string[] = [];
  for (const family of ['ipv4', 'ipv6']) {
    const out = inNetns(ns, 'conntrack', ['-L', '-f', family]);
    for (const line of out.split('\n')) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 3 || !/^\d+$/.test(fields[1] ?? '')) continue;
      const first = (k: string): string | undefined => fields.find((f) => f.startsWith(`${k}=`))?.slice(k.length + 1);
      const src = first('src') ?? '';
      keys.push([src.includes(':') ? 6 : 4, fields[1], src, first('dst'), first('sport') ?? '-', first('dport') ?? '-', first('zone') ?? '0'].join(' '));
    }
  }
  return keys;
}

/** Starts a node script inside a namespace; resolves once it printed `READY`. */
export function startInNetns(ns: string, script: string): Promise<ChildProcess> {
  const child = spawn('ip', ['netns', 'exec', ns, process.execPath, '-e', script], { stdio: ['pipe', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`no READY from ${ns}: ${out} ${err}`)), 15000);
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('READY')) {
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${ns} script exited ${code}: ${out} ${err}`));
    });
  });
}

const CLI_MAIN = new URL('../../cli/main.ts', import.meta.url).pathname;

/** Runs `conndrain conntrack <args>` (the CLI from source, through tsx). */
export function runCli(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--conditions=conndrain-source', '--import', 'tsx', CLI_MAIN, 'conntrack', ...args], { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * client --(veth)--> node --(veth)--> pod, both families: the client side is `<v4>.1.0/24` and
 * `<v6>:1::/64` (node .1, client .2), the pod side `<v4>.2.0/24` and `<v6>:2::/64` (node .1,
 * pod .2), default routes through the node, forwarding on in the node. E.g. v4 `10.201`, v6
 * `fd01`: the pod is 10.201.2.2 and fd01:2::2, the node 10.201.1.1 on the client side.
 */
export function wireClientNodePod(ns: { client: string; node: string; pod: string }, v4: string, v6: string): void {
  const name = (of: string, side: string): string => `${of.slice(-6)}${side}`.replace(/[^a-z0-9]/gi, 'x');
  const vc = name(ns.client, 'c');
  const vp = name(ns.pod, 'p');
  sh('ip', ['link', 'add', `${vc}a`, 'netns', ns.client, 'type', 'veth', 'peer', 'name', `${vc}b`, 'netns', ns.node]);
  sh('ip', ['link', 'add', `${vp}a`, 'netns', ns.pod, 'type', 'veth', 'peer', 'name', `${vp}b`, 'netns', ns.node]);
  const setup: Array<[string, string]> = [
    [ns.client, `addr add ${v4}.1.2/24 dev ${vc}a`], [ns.client, `-6 addr add ${v6}:1::2/64 dev ${vc}a nodad`], [ns.client, `link set ${vc}a up`],
    [ns.client, `route add default via ${v4}.1.1`], [ns.client, `-6 route add default via ${v6}:1::1`],
    [ns.node, `addr add ${v4}.1.1/24 dev ${vc}b`], [ns.node, `-6 addr add ${v6}:1::1/64 dev ${vc}b nodad`], [ns.node, `link set ${vc}b up`],
    [ns.node, `addr add ${v4}.2.1/24 dev ${vp}b`], [ns.node, `-6 addr add ${v6}:2::1/64 dev ${vp}b nodad`], [ns.node, `link set ${vp}b up`],
    [ns.pod, `addr add ${v4}.2.2/24 dev ${vp}a`], [ns.pod, `-6 addr add ${v6}:2::2/64 dev ${vp}a nodad`], [ns.pod, `link set ${vp}a up`],
    [ns.pod, `route add default via ${v4}.2.1`], [ns.pod, `-6 route add default via ${v6}:2::1`],
  ];
  for (const [where, cmd] of setup) sh('ip', ['-n', where, ...cmd.split(' ')]);
  inNetns(ns.node, 'sysctl', ['-qw', 'net.ipv4.ip_forward=1', 'net.ipv6.conf.all.forwarding=1']);
}
