/**
 * runInGuest: boots Debian's kernel under QEMU (TCG unless KVM really works) with the host
 * root shared read-only over virtio-9p and a tmpfs overlay, runs one shell command inside and
 * returns its exit code and output. The job directory (a host temp dir) is shared writable at
 * the same path in the guest: the command can read files the host put there and leave files
 * for the host. One boot per call; bounded by timeoutMs (QEMU is killed then).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chooseAccelerator, checkGuestAvailability, type GuestTools } from './kernel.js';
import { ensureInitramfs, repoRoot } from './initramfs.js';

/** Loaded by stage 2 before the command: IPVS with the schedulers the tests use, conntrack, tunnels, nf_tables (flow pinning's nft rules). */
export const DEFAULT_GUEST_MODULES = ['ip_vs', 'ip_vs_rr', 'ip_vs_wrr', 'ip_vs_mh', 'ip_vs_sh', 'nf_conntrack', 'ipip', 'ip6_tunnel', 'nf_tables'];

export interface GuestRunOptions {
  /** Shell command run by /bin/sh inside the guest (as root), e.g. `node --import tsx --test native/test/ipvs.guest.ts`. */
  command: string;
  /** Directory the command starts in; the repository root by default (the host's tree, read-only). */
  cwd?: string;
  /** Extra environment; PATH, HOME, CONNDRAIN_IN_VM=1 and CONNDRAIN_VM_JOB=<job dir> are always set. */
  env?: Record<string, string>;
  /** Kernel modules to modprobe before the command (default DEFAULT_GUEST_MODULES; [] for none). */
  modules?: readonly string[];
  /** Files written into the job directory before boot (name -> content), visible in the guest at `$CONNDRAIN_VM_JOB/name`. */
  files?: Record<string, string>;
  /** Kills QEMU after this long (default 300 s). */
  timeoutMs?: number;
  memoryMb?: number;
  cpus?: number;
  /** Called with serial console output (kernel and init messages) as it arrives. */
  onConsole?: (text: string) => void;
  /** Keep the job directory for inspection (its path is in the result). */
  keepJobDir?: boolean;
}

export interface GuestRunResult {
  /** The command's exit status; null when it never finished (boot failure or timeout). */
  exitCode: number | null;
  /** The command's stdout and stderr, interleaved (and modprobe failures). */
  output: string;
  /** The serial console: kernel messages and init markers, for diagnosing boot problems. */
  console: string;
  timedOut: boolean;
  /** Wall time from spawning QEMU to its exit. */
  ms: number;
  accel: 'kvm' | 'tcg';
  /** Files the command left in the job directory that the host asked for: see readJobFile. */
  jobDir: string;
  /** Reads a file the guest wrote into the job directory (only with keepJobDir, or inside onFinish). */
  files: Record<string, string>;
}

export class GuestUnavailableError extends Error {
  constructor(reason: string) {
    super(`cannot boot the IPVS test VM: ${reason}`);
    this.name = 'GuestUnavailableError';
  }
}

function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

function qemuArgs(tools: GuestTools, initramfs: string, jobDir: string, accel: 'kvm' | 'tcg', memoryMb: number, cpus: number): string[] {
  const cmdline = [
    'console=ttyS0', 'panic=-1', 'loglevel=4', 'mitigations=off', 'nokaslr',
    `conndrain.init=${join(repoRoot, 'test', 'vm', 'guest-init.sh')}`, `conndrain.job=${jobDir}`,
  ].join(' ');
  return [
    '-nodefaults', '-no-user-config', '-no-reboot', '-display', 'none', '-serial', 'stdio',
    ...(accel === 'kvm' ? ['-accel', 'kvm', '-cpu', 'host'] : ['-accel', 'tcg,thread=multi', '-cpu', 'max']),
    '-m', String(memoryMb), '-smp', String(cpus),
    '-kernel', tools.kernel.image, '-initrd', initramfs, '-append', cmdline,
    '-virtfs', 'local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap',
    '-virtfs', `local,path=${jobDir},mount_tag=cdjob,security_model=none,multidevs=remap`,
  ];
}

/** Files the guest may leave in the job directory that runInGuest returns in `files`. */
const RESULT_FILES = ['results.jsonl'];

export async function runInGuest(options: GuestRunOptions): Promise<GuestRunResult> {
  const availability = checkGuestAvailability();
  if (!availability.ok) throw new GuestUnavailableError(availability.reason);
  const tools = availability.tools;
  const initramfs = ensureInitramfs(tools);
  const accel = chooseAccelerator();
  const jobDir = mkdtempSync(join(tmpdir(), 'cdvm-'));
  const env: Record<string, string> = {
    PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    HOME: '/root',
    LANG: 'C.UTF-8',
    CONNDRAIN_IN_VM: '1',
    CONNDRAIN_VM_JOB: jobDir,
    ...options.env,
  };
  writeFileSync(join(jobDir, 'env.sh'), Object.entries(env).map(([k, v]) => `export ${k}=${shellQuote(v)}`).join('\n') + '\n');
  writeFileSync(join(jobDir, 'run.sh'), `cd ${shellQuote(options.cwd ?? repoRoot)} || exit 125\n${options.command}\n`);
  writeFileSync(join(jobDir, 'modules'), (options.modules ?? DEFAULT_GUEST_MODULES).join('\n') + '\n');
  for (const [name, content] of Object.entries(options.files ?? {})) writeFileSync(join(jobDir, name), content);

  const started = performance.now();
  const timeoutMs = options.timeoutMs ?? 300_000;
  const child = spawn(tools.qemu, qemuArgs(tools, initramfs, jobDir, accel, options.memoryMb ?? 2048, options.cpus ?? 2), {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let consoleText = '';
  const onData = (chunk: Buffer): void => {
    const text = chunk.toString('utf8');
    consoleText += text;
    options.onConsole?.(text);
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, timeoutMs);
  try {
    await new Promise<void>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', () => resolve());
    });
  } finally {
    clearTimeout(timer);
  }
  const ms = performance.now() - started;
  const read = (name: string): string | undefined => {
    const path = join(jobDir, name);
    return existsSync(path) ? readFileSync(path, 'utf8') : undefined;
  };
  const exitText = read('exit-code');
  const files: Record<string, string> = {};
  for (const name of RESULT_FILES) {
    const content = read(name);
    if (content !== undefined) files[name] = content;
  }
  const result: GuestRunResult = {
    exitCode: exitText === undefined ? null : Number.parseInt(exitText, 10),
    output: read('output') ?? '',
    console: consoleText,
    timedOut,
    ms,
    accel,
    jobDir,
    files,
  };
  if (options.keepJobDir !== true) rmSync(jobDir, { recursive: true, force: true });
  return result;
}
