/**
 * Help reads the same in a terminal of any width and with colors on or off (cli/help-width.ts):
 * what commander prints in a 200-column colour terminal must be the text it prints into a
 * pipe. Without the fixed width commander wraps at the terminal's width and the long
 * descriptions differ.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Command } from 'commander';
import { buildPluginProgram } from './kubectl-plugin.js';
import { defineAllCommands } from './lazy-command.js';
import { buildProgram } from './program.js';

/** Every command of the tree under `command`, defined, with its full name. */
async function everyCommand(command: Command, path: string): Promise<[string, Command][]> {
  await defineAllCommands(command);
  const below = await Promise.all(command.commands.map((sub) => everyCommand(sub, `${path} ${sub.name()}`)));
  return [[path, command], ...below.flat()];
}

/** The help `command` prints to a terminal of `columns` columns, colors `colors`. */
function helpIn(command: Command, columns: number | undefined, colors: boolean): string {
  const saved = command.configureOutput();
  // undefined is what commander's own getOutHelpWidth returns for a pipe (its typings say number).
  command.configureOutput({ getOutHelpWidth: () => columns as number, getOutHasColors: () => colors });
  try {
    return command.helpInformation();
  } finally {
    command.configureOutput(saved);
  }
}

describe('help width', () => {
  for (const build of [buildProgram, buildPluginProgram]) {
    it(`${build().name()}: every command's help is the same in a pipe and in a 200-column colour terminal`, async () => {
      const commands = await everyCommand(build(), build().name());
      assert.ok(commands.length > 4);
      for (const [path, command] of commands) {
        const piped = helpIn(command, undefined, false);
        assert.equal(helpIn(command, 200, true), piped, path);
        assert.equal(helpIn(command, 40, false), piped, path);
      }
    });
  }
});
