/**
 * A minimal writer for the `newc` cpio format the kernel unpacks as an initramfs
 * (Documentation/driver-api/early-userspace/buffer-format.rst). Enough for directories,
 * regular files, symlinks and device nodes; no external `cpio` binary needed.
 */

export type CpioEntry =
  | { kind: 'dir'; path: string; mode?: number }
  | { kind: 'file'; path: string; data: Buffer; mode?: number }
  | { kind: 'symlink'; path: string; target: string }
  | { kind: 'char'; path: string; major: number; minor: number; mode?: number };

const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;
const S_IFLNK = 0o120000;
const S_IFCHR = 0o020000;

function hex8(value: number): string {
  return (value >>> 0).toString(16).padStart(8, '0');
}

function pad4(length: number): Buffer {
  return Buffer.alloc((4 - (length % 4)) % 4);
}

function header(ino: number, mode: number, size: number, name: string, rdevMajor = 0, rdevMinor = 0): Buffer {
  const nameBytes = Buffer.from(`${name}\0`);
  const fields = ['070701', hex8(ino), hex8(mode), hex8(0), hex8(0), hex8(1), hex8(0), hex8(size), hex8(0), hex8(0), hex8(rdevMajor), hex8(rdevMinor), hex8(nameBytes.length), hex8(0)];
  const head = Buffer.concat([Buffer.from(fields.join('')), nameBytes]);
  return Buffer.concat([head, pad4(head.length)]);
}

/** Serializes entries (parents before children) into one newc archive, trailer included. */
export function buildCpio(entries: readonly CpioEntry[]): Buffer {
  const parts: Buffer[] = [];
  let ino = 1;
  for (const entry of entries) {
    const name = entry.path.replace(/^\/+/, '');
    if (entry.kind === 'dir') {
      parts.push(header(ino++, S_IFDIR | (entry.mode ?? 0o755), 0, name));
    } else if (entry.kind === 'file') {
      parts.push(header(ino++, S_IFREG | (entry.mode ?? 0o644), entry.data.length, name), entry.data, pad4(entry.data.length));
    } else if (entry.kind === 'symlink') {
      const data = Buffer.from(entry.target);
      parts.push(header(ino++, S_IFLNK | 0o777, data.length, name), data, pad4(data.length));
    } else {
      parts.push(header(ino++, S_IFCHR | (entry.mode ?? 0o600), 0, name, entry.major, entry.minor));
    }
  }
  parts.push(header(0, 0, 0, 'TRAILER!!!'));
  return Buffer.concat(parts);
}
