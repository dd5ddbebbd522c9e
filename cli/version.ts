/**
 * The CLI's version, and the one request answered without the command tree: `conndrain
 * --version` (or `-V`) alone prints it before commander or any command is loaded. Any other
 * arguments, `--version` among them, go through the program as usual.
 */
export const VERSION = '0.1.0';

export function isVersionRequest(args: readonly string[]): boolean {
  return args.length === 1 && (args[0] === '--version' || args[0] === '-V');
}
