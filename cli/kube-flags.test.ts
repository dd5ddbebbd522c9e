/** kubectl's flags before a plugin's command name, moved after it (cli/kube-flags.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isKubectlFlag, moveKubectlFlagsAfterCommand } from './kube-flags.js';

const COMMANDS = new Set(['inject', 'stale', 'check']);

describe('moveKubectlFlagsAfterCommand', () => {
  const cases: Array<[string[], string[]]> = [
    [['-n', 'shop', 'check', '--json'], ['check', '-n', 'shop', '--json']],
    [['--context', 'prod', '--kubeconfig=/k', 'stale', '--delete'], ['stale', '--context', 'prod', '--kubeconfig=/k', '--delete']],
    [['--namespace=shop', 'inject', '-f', 'a.yaml'], ['inject', '--namespace=shop', '-f', 'a.yaml']],
    [['stale', '--context', 'prod'], ['stale', '--context', 'prod']],
    [['--help'], ['--help']],
    [['-n', 'shop'], ['-n', 'shop']],
    [['--verbose', '-n', 'shop', 'inject'], ['--verbose', 'inject', '-n', 'shop']],
    // A value that is also a command's name is the flag's value, as kubectl reads it.
    [['-n', 'check', 'stale'], ['stale', '-n', 'check']],
  ];
  for (const [args, expected] of cases) {
    it(`${args.join(' ')} -> ${expected.join(' ')}`, () => {
      assert.deepEqual(moveKubectlFlagsAfterCommand(args, COMMANDS), expected);
    });
  }
});

describe('isKubectlFlag', () => {
  it('knows kubectl\'s connection flags, with or without a value', () => {
    for (const flag of ['-n', '--namespace', '--context', '--context=prod', '--kubeconfig=/k']) assert.ok(isKubectlFlag(flag), flag);
    for (const flag of ['--bogus', '-f', '--namespaces', '--json']) assert.ok(!isKubectlFlag(flag), flag);
  });
});
