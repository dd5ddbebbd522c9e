/**
 * Boots ONE QEMU guest (test/vm: Debian's kernel, real IPVS, nftables from the host root) that
 * runs agent/ipvs/flowpin/dsr-survival.guest.ts, and reports each guest test here. nf_tables is
 * loaded on top of the harness's default modules.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkGuestAvailability } from '../../../test/vm/kernel.js';
import { describeRunProblem, reportGuestTests, runGuestTests } from '../../../test/vm/guest-tests.js';
import { DEFAULT_GUEST_MODULES } from '../../../test/vm/run-in-guest.js';

const availability = checkGuestAvailability();
const files = ['agent/ipvs/flowpin/dsr-survival.guest.ts'];

test('flow pinning on a real kernel (QEMU guest: IPVS mh + nftables)', { skip: availability.ok ? false : availability.reason, timeout: 900_000 }, async (t) => {
  const modules = [...new Set([...DEFAULT_GUEST_MODULES, 'nf_tables'])]; // nf_tables is in the default list too; kept explicit here
  const result = await runGuestTests(files, { timeoutMs: 780_000, modules });
  t.diagnostic(`guest: ${result.run.accel}, round trip ${(result.run.ms / 1000).toFixed(1)} s, ${result.tests.length} results`);
  for (const line of result.diagnostics) t.diagnostic(line);
  await reportGuestTests(t, result.tests);
  const problem = describeRunProblem(result);
  if (problem !== undefined) assert.fail(problem);
  assert.equal(result.run.exitCode, 0, `guest test run failed:\n${result.run.output.split('\n').slice(-80).join('\n')}`);
});
