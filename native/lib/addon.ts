/**
 * Loads the compiled addon and turns its errors into NetlinkError. The `.node` file is found
 * from the package root: `<root>/build/Release/netlink_native.node`, where <root> is the
 * directory above this file (lib/ when run from the TypeScript sources, dist/ when compiled),
 * else the directory of the `netlink-native` package Node resolves from here (a bundle that
 * inlined this file). Override, for tests and bundles: the NETLINK_NATIVE_ADDON environment
 * variable (a path to a .node file), read here only. Linux only.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { constants } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NetlinkError } from './types.js';

/** Opaque socket handle from `open()`. */
export type RawHandle = { readonly __brand: 'netlink-native-handle' };

/** Knobs of `open()` beyond the public netns; the test-support ones exist to exercise edge paths. */
export interface RawOpenOptions {
  netns?: string;
  /** Test support: initial receive buffer of the dump socket (bytes, >= 64). */
  recvBufferBytes?: number;
  /** Test support: do not peek datagram sizes, so a small buffer shows MSG_TRUNC. */
  noPeek?: boolean;
  /** Test support: SO_RCVBUF of the request socket (tiny values force ACK overruns). */
  ackRcvbufBytes?: number;
  /** Deletes per sendmsg (default 256). */
  deleteBatch?: number;
}

export interface RawAddon {
  open(options?: RawOpenOptions): RawHandle;
  call(handle: RawHandle, op: string, args: object): Promise<unknown>;
  close(handle: RawHandle): void;
  ops(): string[];
  /** A listening TCP socket with SO_REUSEPORT (+SO_REUSEADDR, close-on-exec, non-blocking): its descriptor. */
  listenReusePort(host: string, port: number, backlog?: number): number;
}

const ADDON_PATH = join('build', 'Release', 'netlink_native.node');

/** Where the addon is expected: the override, else the package root(s). */
function addonCandidates(): string[] {
  // eslint-disable-next-line no-restricted-properties -- the one documented override of the loader
  const override = process.env.NETLINK_NATIVE_ADDON;
  if (override !== undefined && override !== '') return [override];
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [join(here, '..', ADDON_PATH)];
  try {
    candidates.push(join(dirname(createRequire(import.meta.url).resolve('netlink-native/package.json')), ADDON_PATH));
  } catch {
    // not resolvable from here: the package root above is the only place
  }
  return [...new Set(candidates)];
}

/** The first candidate that exists, and every place looked at. */
function findAddon(): { path?: string; looked: string[] } {
  const looked = addonCandidates();
  return { path: looked.find((p) => existsSync(p)), looked };
}

let cached: RawAddon | undefined;

/** The addon, loaded once. Throws NetlinkError (ENOTSUP / ENOENT) with a clear message. */
export function loadAddon(): RawAddon {
  if (cached) return cached;
  if (process.platform !== 'linux') {
    throw new NetlinkError('load', constants.errno.ENOTSUP ?? 95, 'ENOTSUP', `netlink-native works only on Linux (netlink sockets); this is ${process.platform}`);
  }
  const { path, looked } = findAddon();
  if (path === undefined) {
    throw new NetlinkError('load', constants.errno.ENOENT, 'ENOENT', `the native addon is not built (not found: ${looked.join(', ')}); run \`npm run build:native\` (needs build-essential and python3)`);
  }
  const require = createRequire(import.meta.url);
  cached = require(path) as RawAddon;
  return cached;
}

const errnoNames = new Map<number, string>(Object.entries(constants.errno).map(([name, value]) => [value, name]));

/** errno number -> name (`ENOENT`), `E<n>` when unknown. */
export function errnoName(errno: number): string {
  return errnoNames.get(errno) ?? `E${errno}`;
}

const READABLE: Record<string, string> = {
  EPERM: 'needs CAP_NET_ADMIN (run as root or grant NET_ADMIN)',
  EACCES: 'needs CAP_NET_ADMIN (run as root or grant NET_ADMIN)',
  EPROTONOSUPPORT: 'this kernel has no netlink support for it (module not loaded?)',
  EMSGSIZE: 'a netlink reply did not fit the receive buffer (MSG_TRUNC); nothing was trusted',
  ENOBUFS: 'the kernel dropped netlink messages (receive queue overrun)',
  ETIMEDOUT: 'the kernel did not answer in time',
  EBADF: 'the handle is closed',
  ENOTRECOVERABLE: 'could not switch back from the network namespace',
};

interface RawError { errno?: unknown; code?: unknown; message?: unknown }

/** Converts whatever the addon rejected or threw into a NetlinkError for `op`. */
export function toNetlinkError(op: string, error: unknown): NetlinkError {
  if (error instanceof NetlinkError) return error;
  const raw = (typeof error === 'object' && error !== null ? error : {}) as RawError;
  const errno = typeof raw.errno === 'number' ? raw.errno : constants.errno.EIO;
  const code = typeof raw.code === 'string' && raw.code !== '' ? raw.code : errnoName(errno);
  const detail = typeof raw.message === 'string' ? raw.message : String(error);
  const readable = READABLE[code];
  const message = readable !== undefined && !detail.includes(readable) ? `${readable} (${detail})` : detail;
  return new NetlinkError(op, errno, code, message);
}
