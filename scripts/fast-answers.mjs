// The table of precomputed answers beside the compiled CLI (scripts/build-cli.mjs step 3):
// dist/cli/<entry>.answers.json for each entry point, read by the launcher
// (bin/fast-answers.cjs), which prints an answer from it without loading the bundle or
// commander. Written from the built bundle itself, so it cannot drift from the program:
//   1. the help and version requests of each command tree (cli/help-requests.ts), listed by a
//      throw-away bundle of that module and the two programs;
//   2. the compiled entry point run with each request (plain node, stdout a pipe), keeping what
//      exits 0 with nothing on stderr: a request that fails here (`ipvs list --help` where
//      netlink-native cannot load, as in the webhook image's build) stays out of the table and
//      goes through commander;
//   3. the entry point's own text recorded with the answers: esbuild names each chunk after a
//      hash of its content and of the chunks it imports, so the entry point's text pins every
//      chunk its help can load; the launcher uses the table only while that text is unchanged.
import { spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';

/** cli/help-requests.ts applied to both programs, as a script that prints them as JSON. */
const LISTER = `
import { listHelpRequests } from './cli/help-requests.ts';
import { buildProgram } from './cli/program.ts';
import { buildPluginProgram } from './cli/kubectl-plugin.ts';
process.stdout.write(JSON.stringify({ main: await listHelpRequests(buildProgram()), 'kubectl-main': await listHelpRequests(buildPluginProgram()) }));
`;

/** What a run of `node <args>` printed and how it ended. */
function run(args, cwd) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } });
    const out = [];
    const err = [];
    child.stdout.on('data', (chunk) => out.push(chunk));
    child.stderr.on('data', (chunk) => err.push(chunk));
    child.on('error', () => resolve({ status: null, stdout: '', stderr: 'could not start node' }));
    child.on('close', (status) => resolve({ status, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') }));
  });
}

/** Runs `jobs` (functions returning promises) `width` at a time; their results in order. */
async function runAll(jobs, width) {
  const results = new Array(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const index = next++;
      results[index] = await jobs[index]();
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, jobs.length) }, worker));
  return results;
}

/** The requests of each entry point, from a bundle of cli/help-requests.ts written beside `dir` and removed after. */
async function listRequests({ esbuild, root, dir, external, banner }) {
  const lister = `${dir}.requests.mjs`;
  try {
    await esbuild.build({
      absWorkingDir: root,
      stdin: { contents: LISTER, resolveDir: root, sourcefile: 'help-requests-lister.ts', loader: 'ts' },
      outfile: lister,
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      external,
      banner: { js: banner },
      logLevel: 'warning',
    });
    const listed = await run([lister], root);
    if (listed.status !== 0) throw new Error(`listing the help requests failed: ${listed.stderr.trim()}`);
    return JSON.parse(listed.stdout);
  } finally {
    rmSync(lister, { force: true });
  }
}

/** Writes `<entry>.answers.json` into `dir` (the built bundle) for each entry point; returns how many answers each has. */
export async function writeFastAnswers({ esbuild, root, dir, external, banner }) {
  const requests = await listRequests({ esbuild, root, dir, external, banner });
  const counts = {};
  for (const [entry, argvs] of Object.entries(requests)) {
    const file = join(dir, `${entry}.js`);
    const runs = await runAll(argvs.map((argv) => () => run([file, ...argv], root)), availableParallelism());
    const answers = {};
    argvs.forEach((argv, i) => {
      const r = runs[i];
      if (r.status === 0 && r.stderr === '' && r.stdout !== '') answers[argv.join('\0')] = r.stdout;
    });
    writeFileSync(join(dir, `${entry}.answers.json`), `${JSON.stringify({ bundle: readFileSync(file, 'utf8'), answers })}\n`);
    counts[entry] = `${String(Object.keys(answers).length)} of ${String(argvs.length)}`;
  }
  return counts;
}
