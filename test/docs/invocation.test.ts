import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findInvocation, scriptCliArgs } from './invocation.js';

describe('findInvocation', () => {
  it('finds the CLI, the plugin and npm scripts, through wrappers and after --', () => {
    assert.deepEqual(findInvocation(['sudo', 'nice', '-n', '19', 'conndrain', 'doctor']), { kind: 'conndrain', args: ['doctor'] });
    assert.deepEqual(findInvocation(['node', 'bin/conndrain.cjs', 'inject']), { kind: 'conndrain', args: ['inject'] });
    assert.deepEqual(findInvocation(['kubectl', 'debug', 'node/n', '--', 'node', '/app/bin/conndrain.mjs', 'agent', '--cleanup']), { kind: 'conndrain', args: ['agent', '--cleanup'] });
    assert.deepEqual(findInvocation(['kubectl', 'conndrain', 'check']), { kind: 'kubectl conndrain', args: ['check'] });
    assert.deepEqual(findInvocation(['kubectl-conndrain', 'stale']), { kind: 'kubectl conndrain', args: ['stale'] });
    assert.deepEqual(findInvocation(['npm', 'run', '-s', 'conndrain', '--', 'help', 'inject']), { kind: 'npm script', script: 'conndrain', args: ['help', 'inject'] });
    assert.deepEqual(findInvocation(['npm', 'test']), { kind: 'npm script', script: 'test', args: [] });
  });

  it('leaves out other programs and the CLI\'s own output lines', () => {
    assert.equal(findInvocation(['kubectl', 'apply', '-f', 'x']), undefined);
    assert.equal(findInvocation(['node', 'bench/run.ts']), undefined);
    assert.equal(findInvocation(['npm', 'ci']), undefined);
    assert.equal(findInvocation(['conndrain', 'conntrack', 'list:', 'unknown', 'option', '--bogus']), undefined);
  });

  it('reads the CLI command an npm script runs', () => {
    assert.deepEqual(scriptCliArgs('tsx --conditions=conndrain-source cli/main.ts demo', ['--json']), ['demo', '--json']);
    assert.deepEqual(scriptCliArgs('node bin/conndrain.cjs', ['help', 'inject']), ['help', 'inject']);
    assert.equal(scriptCliArgs('tsx bench/run.ts', []), undefined);
  });
});
