/**
 * Help is wrapped at a fixed 80 columns, in a terminal of any width as into a pipe. Commander
 * would wrap at the terminal's width on a TTY; a fixed width makes `--help` the same text
 * everywhere: in a terminal, in a pipe, in the docs and in the tests that compare them.
 */
import type { Command } from 'commander';

export const HELP_WIDTH = 80;

/** Fixes the help width of `program` and of every command created under it afterwards (commander copies the setting). */
export function fixHelpWidth(program: Command): Command {
  return program.configureHelp({ ...program.configureHelp(), helpWidth: HELP_WIDTH });
}
