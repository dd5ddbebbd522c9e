/**
 * Boots ONE QEMU guest (test/vm) with Debian's kernel and real IPVS and runs
 * test/agent/handover-ipvs.guest.ts there: two real agent processes overlapping on one node
 * (SIGTERM, then kill -9 of the older one), the kernel's weights sampled every ~10 ms.
 * The agents run the compiled CLI, bundled here first (scripts/build-cli.mjs, no type-check,
 * into .vm-cache): through tsx each agent process took 65-140 s to start under TCG.
 * Skips with the reason when qemu or the kernel are missing (CONNDRAIN_AGENT_VM=0 skips it on
 * a host too loaded for TCG, as agent-ipvs.vm.test.ts).
 */
import { test } from 'node:test';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { checkGuestAvailability } from '../vm/kernel.js';
import { runAndReportGuestTests } from '../vm/guest-tests.js';
import { REPO } from './node-netns.js';

const availability = checkGuestAvailability();
const optIn = process.env.CONNDRAIN_AGENT_VM === '0' ? 'skipped (CONNDRAIN_AGENT_VM=0)' : false;

/** Bundles the CLI from the sources as they are now into .vm-cache (the guest sees the host's files). */
function buildCli(): string {
  const outdir = join(REPO, '.vm-cache', 'handover-ipvs-cli');
  const built = spawnSync(process.execPath, [join(REPO, 'scripts/build-cli.mjs'), '--no-typecheck', '--outdir', outdir], { cwd: REPO, encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`could not bundle the CLI:\n${built.stdout}${built.stderr}`);
  return outdir;
}

test('IPVS across a two-process agent handover on a real kernel (QEMU guest)', { skip: availability.ok ? optIn : availability.reason, timeout: 900_000 }, async (t) => {
  await runAndReportGuestTests(t, ['test/agent/handover-ipvs.guest.ts'], { timeoutMs: 780_000, env: { CONNDRAIN_HVM_CLI: buildCli() } });
});
