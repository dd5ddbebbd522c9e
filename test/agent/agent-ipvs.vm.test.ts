/**
 * Boots ONE QEMU guest (test/vm) with Debian's kernel and real IPVS and runs
 * test/agent/agent-ipvs.guest.ts there: two node namespaces, each with its own agent process.
 * Skips with the reason when qemu or the kernel are missing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkGuestAvailability } from '../vm/kernel.js';
import { describeRunProblem, reportGuestTests, runGuestTests } from '../vm/guest-tests.js';

const availability = checkGuestAvailability();
// History: on this 2-core host under TCG (and heavy load from the other suites) the two
// agent processes (tsx + @kubernetes/client-node) printed nothing within 7 minutes of boot, so
// the run never reached the test proper. On a quiet machine it passes in ~95 s (2026-12-02 19:33),
// so it runs by default; CONNDRAIN_AGENT_VM=0 skips it on a host too loaded for TCG.
const optIn = process.env.CONNDRAIN_AGENT_VM === '0' ? 'skipped (CONNDRAIN_AGENT_VM=0)' : false;

test('agent IPVS hold on a real kernel (QEMU guest)', { skip: availability.ok ? optIn : availability.reason, timeout: 900_000 }, async (t) => {
  const result = await runGuestTests(['test/agent/agent-ipvs.guest.ts'], { timeoutMs: 780_000 });
  t.diagnostic(`guest: ${result.run.accel}, round trip ${(result.run.ms / 1000).toFixed(1)} s, ${result.tests.length} results`);
  await reportGuestTests(t, result.tests);
  const problem = describeRunProblem(result);
  if (problem !== undefined) assert.fail(problem);
  assert.equal(result.run.exitCode, 0, `guest test run failed:\n${result.run.output.split('\n').slice(-80).join('\n')}`);
});
