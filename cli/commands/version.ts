import { Option, type Command } from 'commander';
import { VERSION } from '../version.js';

/** `conndrain version`, `kubectl conndrain version`: as `--version`, a subcommand as kubectl plugins have. */
export function defineVersionCommand(version: Command): void {
  version
    .addOption(new Option('--json', 'machine-readable output: {"version": "<version>", "node": "<node version>"}'))
    .action((flags: { json?: boolean }) => {
      process.stdout.write(flags.json === true ? `${JSON.stringify({ version: VERSION, node: process.versions.node })}\n` : `${VERSION}\n`);
    });
}
