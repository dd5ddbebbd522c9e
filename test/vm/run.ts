#!/usr/bin/env -S npx tsx
/**
 * Runs one shell command inside the IPVS test VM and exits with its status:
 *   npx tsx test/vm/run.ts [--timeout SECONDS] [--console] [--no-modules] -- COMMAND...
 * e.g. npx tsx test/vm/run.ts -- 'ipvsadm -A -t 10.0.0.1:80 -s mh && ipvsadm -Ln'
 */
import { runInGuest } from './run-in-guest.js';

const args = process.argv.slice(2);
let timeoutMs = 300_000;
let showConsole = false;
let modules: string[] | undefined;
while (args.length > 0 && args[0] !== '--') {
  const flag = args.shift();
  if (flag === '--timeout') timeoutMs = Number(args.shift()) * 1000;
  else if (flag === '--console') showConsole = true;
  else if (flag === '--no-modules') modules = [];
  else {
    process.stderr.write(`usage: test/vm/run.ts [--timeout SECONDS] [--console] [--no-modules] -- COMMAND...\nunknown flag ${String(flag)}\n`);
    process.exit(2);
  }
}
args.shift();
if (args.length === 0) {
  process.stderr.write('usage: test/vm/run.ts [--timeout SECONDS] [--console] [--no-modules] -- COMMAND...\n');
  process.exit(2);
}
const result = await runInGuest({
  command: args.join(' '),
  timeoutMs,
  modules,
  onConsole: showConsole ? (text) => process.stderr.write(text) : undefined,
});
process.stdout.write(result.output);
process.stderr.write(`[vm] ${result.accel} round trip ${(result.ms / 1000).toFixed(1)} s, exit ${String(result.exitCode)}${result.timedOut ? ' (timed out)' : ''}\n`);
if (result.exitCode === null) process.stderr.write(result.console.split('\n').slice(-40).join('\n') + '\n');
process.exit(result.exitCode ?? 124);
