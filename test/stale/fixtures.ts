import { IPS_DST_NAT, type ConntrackEntry, type ConntrackProtocol } from 'netlink-native/types';
import type { EndpointSliceLike } from '../../src/stale/index.js';

export function slice(name: string, service: string, ports: Array<{ port: number | null; protocol?: string }>, endpoints: Array<{ ip: string; ready?: boolean; serving?: boolean; terminating?: boolean }>, namespace = 'default'): EndpointSliceLike {
  return {
    metadata: { name, namespace, labels: { 'kubernetes.io/service-name': service } },
    addressType: endpoints[0]?.ip.includes(':') === true ? 'IPv6' : 'IPv4',
    ports: ports.map((p) => ({ port: p.port, protocol: p.protocol ?? 'TCP' })),
    endpoints: endpoints.map((e) => ({
      addresses: [e.ip],
      conditions: { ready: e.ready ?? true, serving: e.serving ?? true, terminating: e.terminating ?? false },
    })),
  };
}

let nextPort = 40000;
let nextId = 1;

/** A DNAT'ed entry: client -> service, translated to target. */
export function natEntry(protocol: ConntrackProtocol, service: string, servicePort: number, target: string, targetPort: number, extra: Partial<ConntrackEntry> = {}): ConntrackEntry {
  const clientPort = nextPort++;
  const family = target.includes(':') ? 6 : 4;
  const client = family === 6 ? 'fd00:1::99' : '10.0.0.99';
  return {
    family,
    protocol,
    protocolNumber: protocol === 'tcp' ? 6 : protocol === 'udp' ? 17 : protocol === 'sctp' ? 132 : 0,
    original: { src: client, dst: service, srcPort: clientPort, dstPort: servicePort },
    reply: { src: target, dst: client, srcPort: targetPort, dstPort: clientPort },
    state: protocol === 'tcp' ? 'ESTABLISHED' : undefined,
    timeout: 100,
    mark: 0,
    zone: 0,
    status: IPS_DST_NAT | 0x2 | 0x4,
    statusFlags: ['SEEN_REPLY', 'ASSURED', 'DST_NAT'],
    id: nextId++,
    ...extra,
  };
}

/** A plain (not NAT'ed) entry. */
export function directEntry(protocol: ConntrackProtocol, dst: string, dstPort: number): ConntrackEntry {
  const e = natEntry(protocol, dst, dstPort, dst, dstPort);
  return { ...e, status: 0x2 | 0x4, statusFlags: ['SEEN_REPLY', 'ASSURED'] };
}
