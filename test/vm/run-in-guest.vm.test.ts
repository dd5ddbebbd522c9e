import { test } from 'node:test';
import { existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import assert from 'node:assert/strict';
import { checkGuestAvailability } from './kernel.js';
import { runInGuest } from './run-in-guest.js';

const availability = checkGuestAvailability();

test('runInGuest: Debian kernel, IPVS loaded, exit status, output, env and job files', { skip: availability.ok ? false : availability.reason, timeout: 600_000 }, async () => {
  const probe = `/usr/conndrain-vm-probe-${randomBytes(6).toString('hex')}`;
  const result = await runInGuest({
    command: [
      'uname -r',
      'test -e /proc/net/ip_vs && echo ipvs-present',
      'cat "$CONNDRAIN_VM_JOB/input.txt"',
      'echo "env=$GREETING"',
      `touch ${probe} && echo overlay-writable`,
      'echo to-stderr >&2',
      'exit 7',
    ].join('\n'),
    env: { GREETING: "it's here" },
    files: { 'input.txt': 'from-host\n' },
    timeoutMs: 540_000,
  });
  assert.equal(result.timedOut, false);
  assert.equal(result.exitCode, 7, result.output + result.console.slice(-2000));
  const kernel = availability.ok ? availability.tools.kernel.version : '';
  assert.match(result.output, new RegExp(`^${kernel.replace(/\./g, '\\.')}$`, 'm'));
  assert.match(result.output, /^ipvs-present$/m);
  assert.match(result.output, /^from-host$/m);
  assert.match(result.output, /^env=it's here$/m);
  assert.match(result.output, /^overlay-writable$/m);
  assert.match(result.output, /^to-stderr$/m);
  assert.equal(existsSync(probe), false, 'guest writes stay in its tmpfs overlay');
  assert.match(result.console, /CONNDRAIN-VM-DONE/);
});

test('runInGuest: a command that outlives its timeout is killed and reported', { skip: availability.ok ? false : availability.reason, timeout: 120_000 }, async () => {
  const result = await runInGuest({ command: 'sleep 600', timeoutMs: 15_000, modules: [] });
  assert.equal(result.timedOut, true);
  assert.equal(result.exitCode, null);
  assert.ok(result.ms < 30_000, `took ${result.ms} ms`);
});
