/**
 * Boots ONE QEMU guest (test/vm) with Debian's kernel and real IPVS and runs
 * test/agent/handover-ipvs.guest.ts there: two real agent processes overlapping on one node
 * (SIGTERM, then kill -9 of the older one), the kernel's weights sampled every ~10 ms.
 * Skips with the reason when qemu or the kernel are missing (CONNDRAIN_AGENT_VM=0 skips it on
 * a host too loaded for TCG, as agent-ipvs.vm.test.ts).
 */
import { test } from 'node:test';
import { checkGuestAvailability } from '../vm/kernel.js';
import { runAndReportGuestTests } from '../vm/guest-tests.js';

const availability = checkGuestAvailability();
const optIn = process.env.CONNDRAIN_AGENT_VM === '0' ? 'skipped (CONNDRAIN_AGENT_VM=0)' : false;

test('IPVS across a two-process agent handover on a real kernel (QEMU guest)', { skip: availability.ok ? optIn : availability.reason, timeout: 900_000 }, async (t) => {
  await runAndReportGuestTests(t, ['test/agent/handover-ipvs.guest.ts'], { timeoutMs: 780_000 });
});
