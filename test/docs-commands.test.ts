/**
 * Every command the docs show exists: each `conndrain ...`, `kubectl conndrain ...` and
 * `npm run ...` line of the Markdown pages (code blocks and inline code) names commands of the
 * CLI's tree (cli/program.ts, cli/kubectl-plugin.ts, every command defined) and only flags
 * those commands declare, and each npm script it runs is one of package.json's; a script that
 * runs the CLI (`npm run demo`, `npm run conndrain -- help inject`) is checked as that
 * CLI command line.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import type { Command } from 'commander';
import { moveKubectlFlagsAfterCommand } from '../cli/kube-flags.js';
import { buildPluginProgram } from '../cli/kubectl-plugin.js';
import { defineListedCommand } from '../cli/lazy-command.js';
import { buildProgram } from '../cli/program.js';
import { checkArguments, isPlaceholder } from './docs/check-arguments.js';
import { findDocCommands } from './docs/doc-commands.js';
import { findInvocation, scriptCliArgs, type Invocation } from './docs/invocation.js';

const REPO = new URL('../', import.meta.url).pathname;
const SKIP = new Set(['node_modules', 'dist', 'build', '.git', 'results', '.vm-cache']);

/** The Markdown pages of the repository (README.md, docs/, and every folder's README). */
function markdownPages(dir = REPO): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (SKIP.has(name)) return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return markdownPages(path);
    return name.endsWith('.md') ? [relative(REPO, path)] : [];
  });
}

/** Every command of the tree defined, its subcommands' too. */
async function defineTree(command: Command): Promise<Command> {
  await defineListedCommand(command);
  for (const sub of command.commands) await defineTree(sub);
  return command;
}

const scripts = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
const conndrain = await defineTree(buildProgram());
const plugin = await defineTree(buildPluginProgram());
const pluginCommands = new Set(plugin.commands.map((c) => c.name()));

/** Why the invocation does not exist; undefined when it does. */
function checkInvocation(invocation: Invocation): string | undefined {
  if (invocation.kind !== 'npm script') {
    return invocation.kind === 'conndrain'
      ? checkArguments(conndrain, invocation.args)
      : checkArguments(plugin, moveKubectlFlagsAfterCommand(invocation.args, pluginCommands));
  }
  if (isPlaceholder(invocation.script)) return undefined;
  const script = scripts[invocation.script];
  if (script === undefined) return `package.json has no script "${invocation.script}"`;
  const cliArgs = scriptCliArgs(script, invocation.args);
  return cliArgs === undefined ? undefined : checkArguments(conndrain, cliArgs);
}

describe('every command in the docs exists', () => {
  const pages = markdownPages();

  it('finds the pages and their commands', () => {
    assert.ok(pages.includes('README.md') && pages.includes('docs/install.md') && pages.includes('docs/cli.md'), pages.join(', '));
  });

  for (const page of pages) {
    const commands = findDocCommands(readFileSync(join(REPO, page), 'utf8'))
      .map((command) => ({ ...command, invocation: findInvocation(command.words) }))
      .filter((command) => command.invocation !== undefined);
    if (commands.length === 0) continue;
    it(`${page}: ${commands.length} command line(s)`, () => {
      const problems = commands.flatMap(({ line, text, invocation }) => {
        const problem = invocation === undefined ? undefined : checkInvocation(invocation);
        return problem === undefined ? [] : [`${page}:${line}: ${text}\n    ${problem}`];
      });
      assert.deepEqual(problems, []);
    });
  }
});
