/**
 * Runs node:test files inside the VM (one boot for all of them) and turns their results into
 * host subtests, so a guest failure shows up in the host's test report with its message.
 */
import type { TestContext } from 'node:test';
import { runInGuest, type GuestRunOptions, type GuestRunResult } from './run-in-guest.js';

export interface GuestTestResult {
  path: string[];
  nesting: number;
  ok: boolean;
  skip: boolean;
  todo: boolean;
  suite: boolean;
  ms: number;
  file?: string;
  error?: { message: string; stack: string; failureType?: string };
}

export interface GuestTestRun {
  run: GuestRunResult;
  tests: GuestTestResult[];
  /** Messages of t.diagnostic() calls inside guest tests, prefixed with the test's path. */
  diagnostics: string[];
}

const REPORTER = 'test/vm/guest-reporter.mjs';

/** Boots one guest running `node --import tsx --test` on the files (paths relative to the repo root). */
export async function runGuestTests(files: readonly string[], options: Omit<GuestRunOptions, 'command'> = {}): Promise<GuestTestRun> {
  const quoted = files.map((file) => `'${file.replace(/'/g, `'\\''`)}'`).join(' ');
  const command = [
    'node --conditions=conndrain-source --import tsx --test --test-concurrency=1',
    '--test-reporter=spec --test-reporter-destination=stdout',
    `--test-reporter=./${REPORTER} --test-reporter-destination="$CONNDRAIN_VM_JOB/results.jsonl"`,
    quoted,
  ].join(' ');
  const run = await runInGuest({ timeoutMs: 600_000, ...options, command });
  const tests: GuestTestResult[] = [];
  const diagnostics: string[] = [];
  for (const line of (run.files['results.jsonl'] ?? '').split('\n')) {
    if (line.trim() === '') continue;
    const parsed = JSON.parse(line) as GuestTestResult | { diagnostic: string; path: string[] };
    if ('diagnostic' in parsed) diagnostics.push(`${parsed.path.join(' > ')}: ${parsed.diagnostic}`);
    else tests.push(parsed);
  }
  return { run, tests, diagnostics };
}

/** Results that stand for themselves: leaves, plus failed parents none of whose children failed (hook failures). */
export function reportableResults(tests: readonly GuestTestResult[]): GuestTestResult[] {
  const out: GuestTestResult[] = [];
  for (let i = 0; i < tests.length; i++) {
    const test = tests[i];
    if (test === undefined) continue;
    // Children are reported before their parent, one nesting level deeper.
    const children: GuestTestResult[] = [];
    for (let j = i - 1; j >= 0; j--) {
      const previous = tests[j];
      if (previous === undefined || previous.nesting <= test.nesting) break;
      if (previous.nesting === test.nesting + 1) children.push(previous);
    }
    if (children.length === 0) out.push(test);
    else if (!test.ok && children.every((child) => child.ok)) out.push(test);
  }
  return out;
}

function tail(text: string, lines: number): string {
  return text.split('\n').slice(-lines).join('\n');
}

/** Explains a run that did not produce trustworthy results (boot failure, timeout, crash). */
export function describeRunProblem(result: GuestTestRun): string | undefined {
  const { run, tests } = result;
  if (run.timedOut) return `guest timed out after ${Math.round(run.ms)} ms\n--- output ---\n${tail(run.output, 60)}\n--- console ---\n${tail(run.console, 30)}`;
  if (run.exitCode === null) return `guest never finished its command\n--- console ---\n${tail(run.console, 60)}`;
  if (tests.length === 0) return `guest reported no test results (exit ${run.exitCode})\n--- output ---\n${tail(run.output, 80)}`;
  if (run.exitCode !== 0 && tests.every((test) => test.ok)) return `guest exited ${run.exitCode} although every reported test passed\n--- output ---\n${tail(run.output, 80)}`;
  return undefined;
}

/** Adds one host subtest per reportable guest result. */
export async function reportGuestTests(t: TestContext, tests: readonly GuestTestResult[]): Promise<void> {
  for (const result of reportableResults(tests)) {
    const name = result.path.join(' > ');
    if (result.skip || result.todo) {
      await t.test(name, { skip: result.skip ? 'skipped in the guest' : false, todo: result.todo }, () => undefined);
      continue;
    }
    await t.test(name, () => {
      if (!result.ok) {
        const error = new Error(`in the guest: ${result.error?.message ?? 'failed'}`);
        error.stack = `${error.message}\n${result.error?.stack ?? ''}`;
        throw error;
      }
    });
  }
}

/**
 * The whole host side of a guest test file in one call: boots one guest for `files`, forwards
 * guest diagnostics, reports each guest test as a subtest of `t`, and fails `t` with the
 * guest's output when the run itself went wrong (boot failure, timeout, crash, exit != 0).
 */
export async function runAndReportGuestTests(t: TestContext, files: readonly string[], options: Omit<GuestRunOptions, 'command'> = {}): Promise<GuestTestRun> {
  const result = await runGuestTests(files, options);
  t.diagnostic(`guest: ${result.run.accel}, round trip ${(result.run.ms / 1000).toFixed(1)} s, ${result.tests.length} results from ${files.join(', ')}`);
  for (const line of result.diagnostics) t.diagnostic(line);
  await reportGuestTests(t, result.tests);
  const problem = describeRunProblem(result);
  if (problem !== undefined) throw new Error(problem);
  if (result.run.exitCode !== 0) throw new Error(`guest test run exited ${String(result.run.exitCode)}:\n${tail(result.run.output, 80)}`);
  return result;
}
