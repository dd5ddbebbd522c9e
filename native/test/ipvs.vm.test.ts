/**
 * Boots ONE QEMU guest (test/vm) running every native/test/ipvs*.guest.ts file on Debian's
 * kernel with ip_vs loaded, and reports each guest test as a subtest here.
 * Skips with the reason when qemu or the kernel are missing (scripts/install-deps.sh installs
 * both, so CI runs it).
 */
import { test } from 'node:test';
import { readdirSync } from 'node:fs';
import { checkGuestAvailability } from '../../test/vm/kernel.js';
import { runAndReportGuestTests } from '../../test/vm/guest-tests.js';

const availability = checkGuestAvailability();
const files = readdirSync(new URL('.', import.meta.url))
  .filter((name) => name.startsWith('ipvs') && name.endsWith('.guest.ts'))
  .sort()
  .map((name) => `native/test/${name}`);

test('IPVS on a real kernel (QEMU guest)', { skip: availability.ok ? false : availability.reason, timeout: 1_320_000 }, async (t) => {
  await runAndReportGuestTests(t, files, { timeoutMs: 1_200_000 });
});
