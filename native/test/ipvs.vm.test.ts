/**
 * Boots ONE QEMU guest (test/vm) running every native/test/ipvs*.guest.ts file on Debian's
 * kernel with ip_vs loaded, and reports each guest test as a subtest here.
 * Skips with the reason when qemu or the kernel are missing (scripts/install-deps.sh installs
 * both, so CI runs it).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { checkGuestAvailability } from '../../test/vm/kernel.js';
import { describeRunProblem, reportGuestTests, runGuestTests } from '../../test/vm/guest-tests.js';

const availability = checkGuestAvailability();
const files = readdirSync(new URL('.', import.meta.url))
  .filter((name) => name.startsWith('ipvs') && name.endsWith('.guest.ts'))
  .sort()
  .map((name) => `native/test/${name}`);

test('IPVS on a real kernel (QEMU guest)', { skip: availability.ok ? false : availability.reason, timeout: 900_000 }, async (t) => {
  const result = await runGuestTests(files, { timeoutMs: 780_000 });
  t.diagnostic(`guest: ${result.run.accel}, round trip ${(result.run.ms / 1000).toFixed(1)} s, ${result.tests.length} results from ${files.join(', ')}`);
  for (const line of result.diagnostics) t.diagnostic(line);
  await reportGuestTests(t, result.tests);
  const problem = describeRunProblem(result);
  if (problem !== undefined) assert.fail(problem);
  assert.equal(result.run.exitCode, 0, `guest test run failed:\n${result.run.output.split('\n').slice(-80).join('\n')}`);
});
