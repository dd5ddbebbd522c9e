/**
 * A command's listing (cli/command-listings.ts: what `--help` shows before the command is
 * loaded) says what its definition (cli/commands/<name>.ts) does: the same term in the
 * parent's command list, the same description; and `--help` reads the same before and after
 * every command is defined.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Command, Help } from 'commander';
import { CONNDRAIN_LISTINGS, PLUGIN_LISTINGS } from './command-listings.js';
import { buildPluginProgram } from './kubectl-plugin.js';
import { addListedCommands, defineAllCommands, defineRequestedCommand } from './lazy-command.js';
import { buildProgram } from './program.js';

describe('command listings', () => {
  for (const listing of new Set([...CONNDRAIN_LISTINGS, ...PLUGIN_LISTINGS])) {
    it(`${listing.name}: the listing's term and description are the defined command's`, async () => {
      const parent = addListedCommands(new Command('conndrain'), [listing]);
      const [command] = parent.commands;
      assert.ok(command);
      const listed = parent.createHelp().subcommandTerm(command);
      await defineAllCommands(parent);
      assert.equal(listed, new Help().subcommandTerm(command));
      assert.equal(command.description(), listing.description);
      assert.ok(command.options.length > 0 || command.commands.length > 0 || command.registeredArguments.length > 0 || listing.usage === '', 'it defines something');
    });
  }

  for (const build of [buildProgram, buildPluginProgram]) {
    it(`${build().name()} --help is the same before and after its commands are defined`, async () => {
      const before = build().helpInformation();
      assert.equal((await defineAllCommands(build())).helpInformation(), before);
    });
  }

  it('defines only the command the arguments name (`agent ...`, `help agent`), after the program\'s own flags', async () => {
    for (const args of [['agent', '--node-name', 'n'], ['help', 'agent'], ['--help', 'agent']]) {
      const program = buildProgram();
      const defined = await defineRequestedCommand(program, args);
      assert.ok(defined);
      assert.equal(defined.name(), 'agent', args.join(' '));
      assert.ok(defined.options.some((option) => option.long === '--node-name'));
      for (const other of program.commands.filter((command) => command.name() !== 'agent')) assert.deepEqual(other.options, [], other.name());
    }
    assert.equal(await defineRequestedCommand(buildProgram(), ['--version']), undefined);
    assert.equal(await defineRequestedCommand(buildProgram(), ['nosuch']), undefined);
  });
});
