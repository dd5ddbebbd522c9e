/**
 * The NetlinkErrors of IPVS operations, with messages a person can act on. The addon wrapper
 * and the in-memory stand-in both build their errors here, so they cannot drift apart.
 */
import { constants } from 'node:os';
import { NetlinkError, type IpvsDestinationKey, type IpvsServiceKey } from './types.js';
import { formatDestinationKey, formatServiceKey } from './ipvs-keys.js';

export const IPVS_UNAVAILABLE_CODE = 'EIPVSUNAVAILABLE';
export const IPVS_UNAVAILABLE_MESSAGE = 'IPVS is not available (is the ip_vs module loaded?)';

export interface IpvsErrorContext {
  service?: IpvsServiceKey;
  destination?: IpvsDestinationKey;
  scheduler?: string;
}

const errnoNames = new Map<number, string>(Object.entries(constants.errno).map(([name, value]) => [value, name]));

export function errnoNumber(code: string): number {
  return (constants.errno as Record<string, number>)[code] ?? 0;
}

export function ipvsUnavailable(op: string): NetlinkError {
  return new NetlinkError(op, errnoNumber('ENOENT'), IPVS_UNAVAILABLE_CODE, IPVS_UNAVAILABLE_MESSAGE);
}

/** The error for a (positive) errno the kernel, or the stand-in acting as the kernel, returned. */
export function ipvsError(op: string, errno: number, context: IpvsErrorContext = {}): NetlinkError {
  const code = errnoNames.get(errno) ?? `E${errno}`;
  const service = context.service === undefined ? 'the service' : `service ${formatServiceKey(context.service)}`;
  const dest = context.destination === undefined ? 'the destination' : `destination ${formatDestinationKey(context.destination)}`;
  let message: string;
  switch (code) {
    case 'ESRCH':
      message = `no such virtual service ${context.service === undefined ? '' : formatServiceKey(context.service)}`.trim();
      break;
    case 'ENOENT':
      message = context.scheduler !== undefined
        ? `unknown scheduler '${context.scheduler}' (no ip_vs_${context.scheduler} module?)`
        : `no such ${dest} in ${service}`;
      break;
    case 'EEXIST':
      message = context.destination !== undefined ? `${dest} already exists in ${service}` : `${service} already exists`;
      break;
    case 'EPERM':
      message = 'permission denied (IPVS changes need CAP_NET_ADMIN)';
      break;
    case 'ERANGE':
      message = `${dest}: weight or thresholds out of range`;
      break;
    case 'EINVAL':
      message = `the kernel rejected the request for ${context.destination === undefined ? service : `${dest} in ${service}`} as invalid (EINVAL)`;
      break;
    default:
      message = `${code}${context.service === undefined ? '' : ` (${service})`}`;
  }
  return new NetlinkError(op, errno, code, message);
}
