import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Command } from 'commander';
import { checkArguments } from './check-arguments.js';

/** A small tree shaped like conndrain's: options with and without values, subcommands, arguments. */
function program(): Command {
  const root = new Command('tool').version('1.0.0');
  root.command('run').option('-f, --file <path>').option('--json').option('--level [n]');
  const group = root.command('group');
  group.command('list').option('--zone <n>');
  group.command('delete').argument('<what>');
  root.command('lab').argument('<scenario>');
  return root;
}

describe('checkArguments', () => {
  it('accepts commands, subcommands, declared flags and their values', () => {
    for (const args of [
      [], ['--version'], ['--help'], ['run', '-f', 'x.yaml', '--json'], ['run', '--file=x.yaml'], ['run', '--level', '--json'],
      ['group', 'list', '--zone', '3'], ['group', 'delete', 'a'], ['lab', 'ghost'], ['help', 'run'], ['group', 'help', 'list'],
      ['run', '[--json]', '[--file', 'PATH]'], ['group', 'list/delete'], ['group', 'list/...'], ['<command>', '--help'], ['run', '...'],
      ['lab', '--', 'anything'],
    ]) assert.equal(checkArguments(program(), args), undefined, args.join(' '));
  });

  it('names a command, subcommand or flag that does not exist, and an operand too many', () => {
    assert.equal(checkArguments(program(), ['nosuch']), '`tool` has no command nosuch (it has run, group, lab)');
    assert.equal(checkArguments(program(), ['group', 'stats']), '`tool group` has no command stats (it has list, delete)');
    assert.equal(checkArguments(program(), ['group', 'list/stats']), '`tool group` has no command stats (it has list, delete)');
    assert.equal(checkArguments(program(), ['run', '--nope']), '`tool run` has no option --nope');
    assert.equal(checkArguments(program(), ['group', 'list', '--file', 'x']), '`tool group list` has no option --file');
    assert.equal(checkArguments(program(), ['help', 'nosuch']), '`tool` has no command nosuch (it has run, group, lab)');
    assert.equal(checkArguments(program(), ['run', 'extra']), '`tool run` takes no argument, but is given extra');
    assert.equal(checkArguments(program(), ['lab', 'a', 'b']), '`tool lab` takes 1 argument(s), but is given b');
  });
});
