/** `conndrain conntrack ...` argument handling (no root, no kernel access). */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { runCli } from './conntrack-netns.js';

it('conntrack --help shows the commands and an example', () => {
  const r = runCli(['--help']);
  assert.equal(r.status, 0);
  for (const word of ['list', 'delete', 'stats', 'Examples:', 'conndrain conntrack delete --address']) assert.ok(r.stdout.includes(word), word);
  assert.match(runCli(['delete', '--help']).stdout, /--dry-run[\s\S]*--entries[\s\S]*Examples?:/);
});

it('delete refuses to run without an address (exit 2)', () => {
  const r = runCli(['delete', '--dry-run']);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /at least one --address/);
});

it('rejects unknown match modes and out-of-range zones before opening anything', () => {
  for (const args of [['delete', '--address', '10.0.0.1', '--match', 'dst'], ['list', '--zone', '70000']]) {
    const r = runCli(args);
    assert.notEqual(r.status, 0, args.join(' '));
    assert.match(r.stderr, /invalid|not one of|expected/, args.join(' '));
  }
});
