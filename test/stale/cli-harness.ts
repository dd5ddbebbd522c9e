/**
 * Runs `conndrain conntrack stale ...` and `conndrain doctor ...` as a child process would
 * see them (argv in, stdout/exit code out), with the commands this issue adds registered
 * on a bare program (same error handling as cli/main.ts).
 */
import { Command } from 'commander';
import { addStaleCommand } from '../../cli/stale-command.js';
import { registerDoctorCommands } from '../../cli/doctor-commands.js';
import { CliExit } from '../../cli/exit.js';

const program = new Command('conndrain').exitOverride();
addStaleCommand(program.command('conntrack'));
registerDoctorCommands(program);
try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (!(error instanceof CliExit)) throw error;
  if (error.message !== '') process.stderr.write(`${error.message}\n`);
  process.exitCode = error.exitCode;
}
