import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mapLimit } from './map-limit.js';

test('results in the items\' order, never more than `limit` calls in flight', async () => {
  let inFlight = 0;
  let most = 0;
  const out = await mapLimit([5, 1, 4, 2, 3], 2, async (n) => {
    inFlight += 1;
    most = Math.max(most, inFlight);
    await new Promise((resolve) => setTimeout(resolve, n));
    inFlight -= 1;
    return n * 10;
  });
  assert.deepEqual(out, [50, 10, 40, 20, 30]);
  assert.equal(most, 2);
});

test('no items: no call', async () => {
  assert.deepEqual(await mapLimit([], 4, () => Promise.reject(new Error('called'))), []);
});

test('a rejection rejects the whole', async () => {
  await assert.rejects(mapLimit([1, 2], 1, (n) => (n === 2 ? Promise.reject(new Error('two')) : Promise.resolve(n))), /two/);
});
