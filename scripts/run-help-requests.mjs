// Runs a compiled CLI entry point once per request, each in a worker thread of its own (a fresh
// module graph and process.argv, at half the cost of a process, which starts node again), and
// returns what each printed: part of the throw-away program scripts/fast-answers.mjs bundles
// and runs in a process of its own. cli/fast-answers.test.ts checks every answer kept against
// a process of its own.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

/** What the entry point `file` prints for `argv`: its exit code, stdout and stderr. */
function runInWorker(file, argv) {
  return new Promise((resolve) => {
    const worker = new Worker(file, { argv, execArgv: [], stdout: true, stderr: true });
    const out = [];
    const err = [];
    worker.stdout.on('data', (chunk) => out.push(chunk));
    worker.stderr.on('data', (chunk) => err.push(chunk));
    worker.on('error', (error) => err.push(Buffer.from(String(error))));
    worker.on('exit', (status) => resolve({ status, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') }));
  });
}

/** Each request's run of `file`, as many at a time as the machine has cores, in order. */
export async function runHelpRequests(file, argvs) {
  const results = new Array(argvs.length);
  let next = 0;
  const work = async () => {
    while (next < argvs.length) {
      const index = next++;
      results[index] = await runInWorker(file, argvs[index]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(availableParallelism(), argvs.length) }, work));
  return results;
}
