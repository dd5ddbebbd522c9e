/**
 * Runnables: started in order, stopped in reverse; a start failure stops what started and names
 * the part; a part that fails after start reports it on the one error channel.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { RunnableFailedError, RunnableStartError, Runnables, type FailureReport, type Runnable } from './runnable.js';

function recorder(log: string[], name: string, failStart = false): Runnable {
  return {
    name,
    start: () => (failStart ? Promise.reject(new Error(`${name} broke`)) : Promise.resolve(void log.push(`start ${name}`))),
    stop: () => Promise.resolve(void log.push(`stop ${name}`)),
  };
}

const silent = pino({ level: 'silent' });

test('start in order, stop in reverse, each once', async () => {
  const log: string[] = [];
  const all = new Runnables(['a', 'b', 'c'].map((n) => recorder(log, n)), silent);
  await all.start();
  await all.stop();
  await all.stop();
  assert.deepEqual(log, ['start a', 'start b', 'start c', 'stop c', 'stop b', 'stop a']);
});

test('a start failure stops those started (reverse), not the rest, and says which part failed', async () => {
  const log: string[] = [];
  const all = new Runnables([recorder(log, 'a'), recorder(log, 'b'), recorder(log, 'c', true), recorder(log, 'd')], silent);
  await assert.rejects(all.start(), (error: unknown) => {
    assert.ok(error instanceof RunnableStartError);
    assert.equal(error.runnable, 'c');
    assert.equal(error.message, 'c: c broke');
    return true;
  });
  await all.stop();
  assert.deepEqual(log, ['start a', 'start b', 'stop b', 'stop a']);
});

test('a failing stop does not keep the others from stopping', async () => {
  const log: string[] = [];
  const broken: Runnable = { name: 'b', start: () => Promise.resolve(), stop: () => Promise.reject(new Error('no')) };
  const all = new Runnables([recorder(log, 'a'), broken, recorder(log, 'c')], silent);
  await all.start();
  await all.stop();
  assert.deepEqual(log, ['start a', 'start c', 'stop c', 'stop a']);
});

/** A runnable that keeps the failure channel its start() got, to report on it later. */
function reporter(log: string[], name: string): Runnable & { fail(error: unknown): void } {
  let report: FailureReport | undefined;
  return {
    name,
    start: (failed) => {
      report = failed;
      log.push(`start ${name}`);
      return Promise.resolve();
    },
    stop: () => Promise.resolve(void log.push(`stop ${name}`)),
    fail: (error) => report?.(error),
  };
}

test('a part that fails after start settles the one error channel, once, with its name and cause', async () => {
  const log: string[] = [];
  const b = reporter(log, 'b');
  const all = new Runnables([recorder(log, 'a'), b, recorder(log, 'c')], silent);
  await all.start();
  assert.equal(all.failure, undefined);
  const cause = new Error('listener gone');
  b.fail(cause);
  b.fail(new Error('again'));
  const failure = await all.failed;
  assert.ok(failure instanceof RunnableFailedError);
  assert.equal(failure.runnable, 'b');
  assert.equal(failure.cause, cause);
  assert.equal(failure.message, 'b failed: listener gone');
  assert.equal(all.failure, failure, 'the first report is kept');
  await all.stop();
  assert.deepEqual(log, ['start a', 'start b', 'start c', 'stop c', 'stop b', 'stop a']);
});

test('a report from a started part while the others start fails the start and stops what started', async () => {
  const log: string[] = [];
  const a = reporter(log, 'a');
  const b: Runnable = { name: 'b', start: () => Promise.resolve(void a.fail(new Error('broke'))), stop: () => Promise.resolve(void log.push('stop b')) };
  const all = new Runnables([a, b, recorder(log, 'c')], silent);
  await assert.rejects(all.start(), (error: unknown) => error instanceof RunnableStartError && error.runnable === 'a' && error.message === 'a: broke');
  assert.deepEqual(log, ['start a', 'stop b', 'stop a']);
});

test('a report once the parts stop is not a failure', async () => {
  const log: string[] = [];
  const a = reporter(log, 'a');
  const all = new Runnables([a], silent);
  await all.start();
  await all.stop();
  a.fail(new Error('closing'));
  assert.equal(all.failure, undefined);
});
