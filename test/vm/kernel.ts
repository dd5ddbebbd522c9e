/**
 * Finds what the IPVS test VM boots: Debian's kernel image (`linux-image-amd64`), its module
 * tree, busybox (static) and qemu-system-x86_64, and which accelerator works here.
 */
import { accessSync, constants, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface GuestKernel {
  version: string;
  image: string;
  modulesDir: string;
}

export interface GuestTools {
  kernel: GuestKernel;
  qemu: string;
  busybox: string;
}

export type Availability = { ok: true; tools: GuestTools } | { ok: false; reason: string };

const QEMU_CANDIDATES = ['/usr/bin/qemu-system-x86_64', '/usr/local/bin/qemu-system-x86_64'];
const BUSYBOX_CANDIDATES = ['/bin/busybox', '/usr/bin/busybox'];

function compareVersions(a: string, b: string): number {
  return a.localeCompare(b, 'en', { numeric: true });
}

/** The newest `/boot/vmlinuz-*-amd64` whose module tree exists (or CONNDRAIN_VM_KERNEL=version). */
export function findGuestKernel(): GuestKernel | undefined {
  const wanted = process.env.CONNDRAIN_VM_KERNEL;
  let names: string[];
  try {
    names = readdirSync('/boot');
  } catch {
    return undefined;
  }
  const versions = names
    .filter((name) => /^vmlinuz-.+-amd64$/.test(name))
    .map((name) => name.slice('vmlinuz-'.length))
    .filter((version) => existsSync(join('/lib/modules', version, 'modules.dep')))
    .filter((version) => wanted === undefined || wanted === version)
    .sort(compareVersions);
  const version = versions.at(-1);
  if (version === undefined) return undefined;
  return { version, image: join('/boot', `vmlinuz-${version}`), modulesDir: join('/lib/modules', version) };
}

function isStaticElf(path: string): boolean {
  // A dynamically linked ELF has a PT_INTERP naming the loader; good enough to look for it.
  const head = readFileSync(path).subarray(0, 4096).toString('latin1');
  return head.startsWith('\x7fELF') && !head.includes('/lib64/ld-linux');
}

/** Everything needed to boot the guest, or the reason it cannot be booted here. */
export function checkGuestAvailability(): Availability {
  if (process.platform !== 'linux' || process.arch !== 'x64') return { ok: false, reason: `the IPVS VM needs linux/x64, this is ${process.platform}/${process.arch}` };
  const qemu = QEMU_CANDIDATES.find((path) => existsSync(path));
  if (qemu === undefined) return { ok: false, reason: 'qemu-system-x86_64 is not installed (Debian: qemu-system-x86; scripts/install-deps.sh installs it)' };
  const kernel = findGuestKernel();
  if (kernel === undefined) return { ok: false, reason: 'no /boot/vmlinuz-*-amd64 with /lib/modules/<version> (Debian: linux-image-amd64)' };
  try {
    accessSync(kernel.image, constants.R_OK);
  } catch {
    return { ok: false, reason: `${kernel.image} is not readable (run as root)` };
  }
  const busybox = BUSYBOX_CANDIDATES.find((path) => existsSync(path) && isStaticElf(path));
  if (busybox === undefined) return { ok: false, reason: 'no statically linked busybox (Debian: busybox-static)' };
  return { ok: true, tools: { kernel, qemu, busybox } };
}

/**
 * KVM only when /dev/kvm opens and the CPU advertises vmx/svm (a nested VM without them has
 * /dev/kvm but hangs: lab-notes). CONNDRAIN_VM_ACCEL=kvm|tcg overrides.
 */
export function chooseAccelerator(): 'kvm' | 'tcg' {
  const forced = process.env.CONNDRAIN_VM_ACCEL;
  if (forced === 'kvm' || forced === 'tcg') return forced;
  try {
    accessSync('/dev/kvm', constants.R_OK | constants.W_OK);
    const flags = readFileSync('/proc/cpuinfo', 'utf8');
    return /\b(vmx|svm)\b/.test(flags) ? 'kvm' : 'tcg';
  } catch {
    return 'tcg';
  }
}
