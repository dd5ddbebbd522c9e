import { NetlinkError } from 'netlink-native/types';

/** Whether `error` is a netlink error with one of `codes` (ENOENT, EEXIST, EIPVSUNAVAILABLE, ...). */
export function isCode(error: unknown, ...codes: string[]): boolean {
  return error instanceof NetlinkError && codes.includes(error.code);
}
