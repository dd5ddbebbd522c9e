/**
 * Thrown by command actions to end the process with a code and a message; only the entry
 * point (cli/main.ts) calls process.exit.
 */
export class CliExit extends Error {
  readonly exitCode: number;

  constructor(exitCode: number, message = '') {
    super(message);
    this.name = 'CliExit';
    this.exitCode = exitCode;
  }
}
