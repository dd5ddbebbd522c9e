/**
 * IPVS keys as text and as checked values: canonical addresses, `tcp:10.0.0.1:80` /
 * `fwmark:42` service names, `10.1.0.5:8080` destination names, service flag names, the spec
 * that re-creates a listed destination, and the argument checks shared by the addon wrapper
 * and the in-memory stand-in (so both reject the same input with the same NetlinkError before
 * anything reaches the kernel).
 *
 * The one text form of an IPVS service and destination key, for every use: the CLI's
 * arguments and output, error messages, the agent's ids and logs, flow pinning's nftables
 * registry. No I/O and no addon: the package exports it as `netlink-native/ipvs-keys`, which
 * the pure core (src/) may import (docs/design/vocabulary.md).
 */
import { isIP } from 'node:net';
import { IPVS_PROTOCOLS, NetlinkError, type IpFamily, type IpvsDestination, type IpvsDestinationKey, type IpvsDestinationSpec, type IpvsForwarding, type IpvsProtocol, type IpvsServiceKey, type IpvsServiceSpec } from './types.js';

const EINVAL = 22;
export const IPVS_FORWARDINGS: readonly IpvsForwarding[] = ['masq', 'local', 'tunnel', 'route', 'bypass'];
export const IPVS_TUNNEL_TYPES = ['ipip', 'gue', 'gre'] as const;

/** IP_VS_SVC_F_* bits (include/uapi/linux/ip_vs.h) and the names we report them under. */
export const IPVS_SERVICE_FLAGS: ReadonlyArray<readonly [number, string]> = [
  [0x0001, 'persistent'],
  [0x0002, 'hashed'],
  [0x0004, 'one-packet'],
  [0x0008, 'sched-flag-1'],
  [0x0010, 'sched-flag-2'],
  [0x0020, 'sched-flag-3'],
];
export const IPVS_SVC_F_HASHED = 0x0002;

export function ipvsFlagNames(flags: number): string[] {
  const names: string[] = [];
  let rest = flags >>> 0;
  for (const [bit, name] of IPVS_SERVICE_FLAGS) {
    if ((rest & bit) !== 0) names.push(name);
    rest &= ~bit;
  }
  if (rest !== 0) names.push(`0x${rest.toString(16)}`);
  return names;
}

/** A caller's value in an error message (JSON, so objects do not print as [object Object]). */
function show(value: unknown): string {
  return value === undefined ? 'undefined' : JSON.stringify(value) ?? typeof value;
}

function invalid(op: string, message: string): NetlinkError {
  return new NetlinkError(op, EINVAL, 'EINVAL', message);
}

/** The family of an address, or undefined when it is not an IP address. */
export function addressFamily(address: string): IpFamily | undefined {
  const version = isIP(address);
  return version === 4 || version === 6 ? version : undefined;
}

/** The kernel's spelling of an address (inet_ntop): IPv6 lower-case and compressed. */
export function canonicalAddress(address: string): string {
  // No colon: not IPv6, nothing to rewrite (the IPv4 case, on every dump row and edit, skips isIP).
  if (!address.includes(':') || addressFamily(address) !== 6) return address;
  return new URL(`http://[${address}]/`).hostname.slice(1, -1);
}

function checkPort(op: string, port: unknown, what: string): void {
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 0 || port > 65535) throw invalid(op, `${what} must be an integer 0-65535, got ${show(port)}`);
}

function checkUint(op: string, value: unknown, max: number, what: string): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > max) throw invalid(op, `${what} must be an integer 0-${max}, got ${show(value)}`);
}

/** Throws NetlinkError EINVAL unless the key names a service the kernel could hold. */
export function checkServiceKey(op: string, key: IpvsServiceKey): void {
  if (typeof key !== 'object' || key === null) throw invalid(op, 'service key must be an object');
  if (key.family !== 4 && key.family !== 6) throw invalid(op, `service family must be 4 or 6, got ${show(key.family)}`);
  if (key.fwmark !== undefined) {
    checkUint(op, key.fwmark, 0xffffffff, 'fwmark');
    if (key.fwmark === 0) throw invalid(op, 'fwmark must be 1-4294967295');
    return;
  }
  if (!IPVS_PROTOCOLS.includes(key.protocol)) throw invalid(op, `service protocol must be tcp, udp or sctp, got ${show(key.protocol)}`);
  if (typeof key.address !== 'string' || addressFamily(key.address) !== key.family) throw invalid(op, `service address ${show(key.address)} is not an IPv${key.family} address`);
  checkPort(op, key.port, 'service port');
}

export function checkDestinationKey(op: string, service: IpvsServiceKey, dest: IpvsDestinationKey): void {
  if (typeof dest !== 'object' || dest === null) throw invalid(op, 'destination must be an object');
  const family = typeof dest.address === 'string' ? addressFamily(dest.address) : undefined;
  if (family === undefined) throw invalid(op, `destination address ${show(dest.address)} is not an IP address`);
  if (dest.family !== undefined && dest.family !== family) throw invalid(op, `destination address ${dest.address} is not IPv${show(dest.family)}`);
  checkPort(op, dest.port, 'destination port');
  void service;
}

export function checkWeight(op: string, weight: unknown): void {
  if (typeof weight !== 'number' || !Number.isInteger(weight) || weight < 0 || weight > 0x7fffffff) throw invalid(op, `weight must be an integer 0-2147483647, got ${show(weight)}`);
}

export function checkDestinationSpec(op: string, service: IpvsServiceKey, spec: IpvsDestinationSpec): void {
  checkDestinationKey(op, service, spec);
  checkWeight(op, spec.weight);
  if (spec.forwarding !== undefined && !IPVS_FORWARDINGS.includes(spec.forwarding)) throw invalid(op, `forwarding must be one of ${IPVS_FORWARDINGS.join(', ')}, got ${show(spec.forwarding)}`);
  if (spec.tunnelType !== undefined && !IPVS_TUNNEL_TYPES.includes(spec.tunnelType)) throw invalid(op, `tunnelType must be ipip, gue or gre, got ${show(spec.tunnelType)}`);
  checkUint(op, spec.upperThreshold, 0xffffffff, 'upperThreshold');
  checkUint(op, spec.lowerThreshold, 0xffffffff, 'lowerThreshold');
  checkUint(op, spec.tunnelPort, 0xffff, 'tunnelPort');
  checkUint(op, spec.tunnelFlags, 0xffff, 'tunnelFlags');
}

export function checkServiceSpec(op: string, spec: IpvsServiceSpec): void {
  if (typeof spec !== 'object' || spec === null) throw invalid(op, 'service spec must be an object');
  checkServiceKey(op, spec.key);
  if (typeof spec.scheduler !== 'string' || !/^[a-z0-9_]{1,15}$/.test(spec.scheduler)) throw invalid(op, `scheduler must be a scheduler name like rr, wrr or mh, got ${show(spec.scheduler)}`);
  checkUint(op, spec.flags, 0xffffffff, 'flags');
  checkUint(op, spec.timeout, 0xffffffff, 'timeout');
  checkUint(op, spec.netmask, 0xffffffff, 'netmask');
  if (spec.key.family === 6 && spec.netmask !== undefined && (spec.netmask < 1 || spec.netmask > 128)) throw invalid(op, `an IPv6 service's netmask is a prefix length 1-128, got ${spec.netmask}`);
}

/** Defaults the kernel tools use: ipvsadm's netmask is all-ones for IPv4 and /128 for IPv6. */
export function defaultNetmask(family: IpFamily): number {
  return family === 6 ? 128 : 0xffffffff;
}

/** `address:port`, `[address]:port` for IPv6 (an IPv6 address is the one with a colon), the address lower-cased as the kernel spells it. */
function hostPort(address: string, port: number): string {
  const lower = address.toLowerCase();
  return lower.includes(':') ? `[${lower}]:${port}` : `${lower}:${port}`;
}

/**
 * `tcp:10.0.0.1:80`, `udp:[fd00::1]:53`, `fwmark:42` (IPv4) or `fwmark6:42` (IPv6): the text
 * of a service key, also its identity (two keys of one service give the same text when their
 * addresses are in the kernel's spelling; parseServiceKey gives that spelling).
 */
export function formatServiceKey(key: IpvsServiceKey): string {
  if (key.fwmark !== undefined) return `${key.family === 6 ? 'fwmark6' : 'fwmark'}:${key.fwmark}`;
  return `${key.protocol}:${hostPort(key.address, key.port)}`;
}

/** `10.1.0.5:8080` or `[fd00::5]:8080`: the text and identity of a real server within its service. */
export function formatDestinationKey(dest: IpvsDestinationKey): string {
  return hostPort(dest.address, dest.port);
}

/** The spec that re-creates a listed real server as it is, at `weight` (its own by default). */
export function destinationSpecOf(d: IpvsDestination, weight = d.weight): Required<IpvsDestinationSpec> {
  return {
    address: d.address, port: d.port, family: d.family, forwarding: d.forwarding, weight,
    upperThreshold: d.upperThreshold, lowerThreshold: d.lowerThreshold,
    tunnelType: d.tunnelType, tunnelPort: d.tunnelPort, tunnelFlags: d.tunnelFlags,
  };
}

function splitHostPort(text: string): { address: string; port: number } | undefined {
  const match = /^\[([^\]]+)\]:(\d{1,5})$/.exec(text) ?? /^([^:[\]]+):(\d{1,5})$/.exec(text);
  if (match === null) return undefined;
  const address = match[1] ?? '';
  const port = Number(match[2]);
  if (addressFamily(address) === undefined || port > 65535) return undefined;
  return { address: canonicalAddress(address), port };
}

/** Parses formatServiceKey's output; undefined when the text is not a service name. */
export function parseServiceKey(text: string): IpvsServiceKey | undefined {
  const fwmark = /^(fwmark6?):(\d+)$/.exec(text);
  if (fwmark !== null) {
    const mark = Number(fwmark[2]);
    if (mark < 1 || mark > 0xffffffff) return undefined;
    return { family: fwmark[1] === 'fwmark6' ? 6 : 4, fwmark: mark };
  }
  const colon = text.indexOf(':');
  const protocol = text.slice(0, colon) as IpvsProtocol;
  if (colon < 0 || !IPVS_PROTOCOLS.includes(protocol)) return undefined;
  const rest = splitHostPort(text.slice(colon + 1));
  if (rest === undefined) return undefined;
  const family = addressFamily(rest.address);
  if (family === undefined) return undefined;
  return { family, protocol, address: rest.address, port: rest.port };
}

export function parseDestinationKey(text: string): IpvsDestinationKey | undefined {
  const parsed = splitHostPort(text);
  if (parsed === undefined) return undefined;
  return { address: parsed.address, port: parsed.port, family: addressFamily(parsed.address) };
}

/** Same service? Addresses compared in canonical form. */
export function sameServiceKey(a: IpvsServiceKey, b: IpvsServiceKey): boolean {
  if (a.family !== b.family) return false;
  if (a.fwmark !== undefined || b.fwmark !== undefined) return a.fwmark === b.fwmark;
  return a.protocol === b.protocol && a.port === b.port && canonicalAddress(a.address) === canonicalAddress(b.address);
}

/** Same destination within a service (family defaults to the address's). */
export function sameDestinationKey(a: IpvsDestinationKey, b: IpvsDestinationKey): boolean {
  return a.port === b.port && canonicalAddress(a.address) === canonicalAddress(b.address);
}
