/** Runnables: started in order, stopped in reverse; a start failure stops what started and names the part. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { RunnableStartError, Runnables, type Runnable } from './runnable.js';

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
