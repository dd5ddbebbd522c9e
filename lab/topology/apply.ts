import { isAlive, run, tryRun } from '../sys/exec.js';
import { ownerPidOf } from './names.js';
import { runSteps, type ScriptStep } from '../sys/script.js';
import type { LinkEnd, RouteSpec, Topology } from './types.js';

/** A built topology: logical name -> real netns name, and how to take it down. */
export interface LiveTopology {
  readonly prefix: string;
  readonly spec: Topology;
  netns(logical: string): string;
  /** Replaces a route (e.g. drop a node from an ECMP route, as BGP would on node loss). */
  setRoute(route: RouteSpec): Promise<void>;
  /** Removes one namespace (a pod that is deleted) and everything in it. */
  removeNamespace(logical: string): Promise<void>;
  /** Deletes every namespace of this run; safe to call twice, never throws. */
  destroy(): Promise<void>;
}

function resolveName(prefix: string, spec: Topology, logical: string): string {
  if (!spec.namespaces.some((ns) => ns.name === logical)) throw new Error(`topology has no namespace "${logical}"`);
  return `${prefix}${logical}`;
}

function routeArgs(route: RouteSpec): string[] {
  const args = ['route', 'replace'];
  if (route.type === 'blackhole') return [...args, 'blackhole', route.to];
  args.push(route.to);
  const vias = route.via ?? [];
  if (vias.length === 1) args.push('via', vias[0] as string);
  if (vias.length > 1) {
    if (route.src !== undefined) args.push('src', route.src);
    for (const via of vias) {
      args.push('nexthop', 'via', via);
      if (route.dev !== undefined) args.push('dev', route.dev);
      if (route.onlink === true) args.push('onlink');
    }
    return args;
  }
  if (route.dev !== undefined) args.push('dev', route.dev);
  if (route.onlink === true) args.push('onlink');
  if (vias.length === 0 && route.dev !== undefined) args.push('scope', 'link');
  if (route.src !== undefined) args.push('src', route.src);
  return args;
}

function configureEnd(netns: string, end: LinkEnd): ScriptStep[] {
  const steps: ScriptStep[] = end.addresses.map((address) => ['ip', '-n', netns, 'addr', 'add', address, 'dev', end.ifname]);
  if (end.proxyArp === true) steps.push(['ip', 'netns', 'exec', netns, 'sysctl', '-qw', `net.ipv4.conf.${end.ifname}.proxy_arp=1`]);
  steps.push(['ip', '-n', netns, 'link', 'set', end.ifname, 'up']);
  return steps;
}

/** Every command that builds the topology, in order (namespaces, sysctls, links, routes). */
export function topologySteps(spec: Topology, netns: (logical: string) => string): ScriptStep[] {
  const steps: ScriptStep[] = [];
  for (const ns of spec.namespaces) {
    const name = netns(ns.name);
    steps.push(['ip', 'netns', 'add', name], ['ip', '-n', name, 'link', 'set', 'lo', 'up']);
    for (const address of ns.loopbackAddresses ?? []) steps.push(['ip', '-n', name, 'addr', 'add', address, 'dev', 'lo']);
    // one `ip netns exec` per namespace (each costs a mount namespace set-up; slow under TCG)
    const sysctls = Object.entries(ns.sysctls ?? {}).map(([key, value]) => `${key}=${value}`);
    if (sysctls.length > 0) steps.push(['ip', 'netns', 'exec', name, 'sysctl', '-qw', ...sysctls]);
  }
  for (const link of spec.links) {
    steps.push(['ip', '-n', netns(link.a.ns), 'link', 'add', link.a.ifname, 'type', 'veth', 'peer', 'name', link.b.ifname, 'netns', netns(link.b.ns)]);
    steps.push(...configureEnd(netns(link.a.ns), link.a), ...configureEnd(netns(link.b.ns), link.b));
  }
  for (const route of spec.routes) steps.push(['ip', '-n', netns(route.ns), ...routeArgs(route)]);
  return steps;
}

/** Builds the topology. On any failure it removes what it created and rethrows. */
export async function applyTopology(spec: Topology, prefix: string): Promise<LiveTopology> {
  const created: string[] = [];
  const netns = (logical: string): string => resolveName(prefix, spec, logical);
  const live: LiveTopology = {
    prefix,
    spec,
    netns,
    setRoute: async (route) => {
      await run('ip', ['-n', netns(route.ns), ...routeArgs(route)]);
    },
    removeNamespace: async (logical) => {
      const name = netns(logical);
      await run('ip', ['netns', 'del', name]);
      const index = created.indexOf(name);
      if (index >= 0) created.splice(index, 1);
    },
    destroy: async () => {
      for (const name of created.splice(0)) await tryRun('ip', ['netns', 'del', name]);
    },
  };
  try {
    // namespaces are recorded first so a failure half-way still removes every one of them
    created.push(...spec.namespaces.map((ns) => netns(ns.name)));
    await runSteps(topologySteps(spec, netns));
    return live;
  } catch (error) {
    await live.destroy();
    throw error;
  }
}

/** Deletes lab namespaces left behind by runs whose process is gone (a crash, a SIGKILL). */
export async function sweepStaleNamespaces(): Promise<string[]> {
  const listing = await run('ip', ['netns', 'list']);
  const stale = listing
    .split('\n')
    .map((line) => line.split(' ')[0] ?? '')
    .filter((name) => {
      const pid = ownerPidOf(name);
      return pid !== undefined && pid !== process.pid && !isAlive(pid);
    });
  for (const name of stale) await tryRun('ip', ['netns', 'del', name]);
  return stale;
}
