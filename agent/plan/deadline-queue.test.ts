import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DeadlineQueue } from './deadline-queue.js';

test('deadline queue: pops exactly the due keys, earliest first, whatever the push order', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 100 }), fc.string({ maxLength: 3 }))), fc.array(fc.integer({ min: 0, max: 120 }), { maxLength: 5 }), (entries, nows) => {
      const q = new DeadlineQueue();
      for (const [at, key] of entries) q.push(at, key);
      const left = [...entries];
      for (const now of [...nows].sort((a, b) => a - b)) {
        const due = q.popDue(now);
        const expected = left.filter(([at]) => at <= now).sort((a, b) => a[0] - b[0]);
        assert.deepEqual([...due].sort(), expected.map(([, k]) => k).sort());
        for (const e of expected) left.splice(left.indexOf(e), 1);
        assert.equal(q.size, left.length);
        assert.equal(q.next, left.length === 0 ? undefined : Math.min(...left.map(([at]) => at)));
      }
    }),
  );
});

test('deadline queue: dropStale removes stale earliest deadlines and stops at the first live one', () => {
  const q = new DeadlineQueue();
  q.push(30, 'live-late');
  q.push(10, 'gone');
  q.push(20, 'live');
  q.push(5, 'updated');
  const live = new Map([['live', 20], ['live-late', 30], ['updated', 40]]);
  q.dropStale((key, at) => live.get(key) !== at);
  assert.equal(q.next, 20);
  assert.equal(q.nextKey, 'live');
  assert.equal(q.size, 2);
  assert.deepEqual(q.popDue(100), ['live', 'live-late']);
});
