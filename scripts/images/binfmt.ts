/**
 * Can this machine run another architecture's programs (a Dockerfile's RUN steps for
 * linux/arm64 on an amd64 builder)? Through qemu-user-static registered in binfmt_misc with
 * the F (fix-binary) flag, so the interpreter works inside the build's chroot. `ensureForeignArch`
 * registers it where it can (root: mounts binfmt_misc, `update-binfmts --enable`) and otherwise
 * returns the exact reason, which scripts/images prints when it skips the platform.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { arch as nodeArch } from 'node:process';

const BINFMT = '/proc/sys/fs/binfmt_misc';

/** OCI/Debian architecture name -> qemu's. */
const QEMU: Record<string, string> = { arm64: 'aarch64', amd64: 'x86_64', arm: 'arm', ppc64le: 'ppc64le', s390x: 's390x', riscv64: 'riscv64' };

/** This machine's architecture, OCI name (amd64, arm64). */
export function hostArch(): string {
  return ({ x64: 'amd64', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x', riscv64: 'riscv64' } as Record<string, string>)[nodeArch] ?? nodeArch;
}

function handler(qemu: string): { registered: boolean; enabled: boolean; flags: string } {
  const path = `${BINFMT}/qemu-${qemu}`;
  if (!existsSync(path)) return { registered: false, enabled: false, flags: '' };
  const text = readFileSync(path, 'utf8');
  return { registered: true, enabled: /^enabled$/m.test(text), flags: /^flags: (\S*)/m.exec(text)?.[1] ?? '' };
}

function run(cmd: string, args: string[]): { ok: boolean; text: string } {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.error !== undefined) return { ok: false, text: r.error.message };
  return { ok: r.status === 0, text: `${r.stdout}${r.stderr}`.trim() };
}

/** Undefined when programs of `arch` run here (after registering qemu if needed), else why not. */
export function ensureForeignArch(arch: string): string | undefined {
  if (arch === hostArch()) return undefined;
  const qemu = QEMU[arch];
  if (qemu === undefined) return `no qemu-user mapping for architecture ${arch}`;
  let h = handler(qemu);
  if (!h.enabled) {
    if (process.getuid?.() !== 0) return `binfmt_misc has no enabled qemu-${qemu} handler and registering one needs root`;
    if (!existsSync(`${BINFMT}/status`)) {
      const m = run('mount', ['-t', 'binfmt_misc', 'binfmt_misc', BINFMT]);
      if (!m.ok) return `binfmt_misc is not mounted and cannot be (mount -t binfmt_misc: ${m.text || 'failed'}); the kernel or sandbox does not allow it`;
    }
    h = handler(qemu);
    if (!h.enabled) {
      if (!existsSync(`/usr/libexec/qemu-binfmt/${qemu}-binfmt-P`) && !existsSync(`/usr/bin/qemu-${qemu}-static`)) return `qemu-user-static is not installed (no qemu-${qemu}-static; scripts/install-deps.sh installs it)`;
      const u = run('update-binfmts', ['--enable', `qemu-${qemu}`]);
      if (!u.ok) return `update-binfmts --enable qemu-${qemu} failed: ${u.text || 'no output'} (binfmt-support installed?)`;
      h = handler(qemu);
      if (!h.enabled) return `qemu-${qemu} is still not enabled in ${BINFMT} after update-binfmts --enable`;
    }
  }
  if (!h.flags.includes('F')) return `the qemu-${qemu} binfmt handler lacks the F flag, so it cannot run inside the build's chroot (register it from qemu-user-static)`;
  // Proof, not belief: run a foreign binary when arch-test is there (mmdebstrap needs it too).
  const t = spawnSync('arch-test', [arch], { encoding: 'utf8' });
  if (t.error === undefined && t.status !== 0) return `arch-test ${arch}: ${`${t.stdout}${t.stderr}`.trim()}`;
  return undefined;
}
