/**
 * The JavaScript end of a streamed scan: batches of a superseded pass still reach onEntries
 * (the caller drops them by pass number), finish() waits for batches that land after the op
 * settled, and an onEntries exception is thrown by finish(), never into the addon's callback.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RECORD_SIZE } from '../lib/conntrack-records.js';
import { ScanBatchReceiver } from '../lib/conntrack-scan-stream.js';

/** n IPv4 UDP records whose ids are first, first+1, ... */
function records(first: number, n: number): ArrayBuffer {
  const out = new Uint8Array(n * RECORD_SIZE);
  const view = new DataView(out.buffer);
  for (let i = 0; i < n; i++) {
    const at = i * RECORD_SIZE;
    out[at] = 4;
    out[at + 1] = 17;
    view.setUint32(at + 20, first + i, true);
  }
  return out.buffer;
}

describe('streamed scan batches', () => {
  it('waits in finish() for the final pass\'s batches that arrive after the op settled, then hands over the rest', async () => {
    const seen: Array<[number, number[]]> = [];
    const receiver = new ScanBatchReceiver((entries, pass) => seen.push([pass, entries.map((e) => e.id)]));
    receiver.onBatch(records(1, 2), 0); // a pass the kernel overran
    const done = receiver.finish(1, 2, records(30, 1));
    let finished = false;
    void done.then(() => (finished = true));
    receiver.onBatch(records(10, 2), 1);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(finished, false, 'one batch of the final pass is still on its way');
    receiver.onBatch(records(20, 2), 1);
    await done;
    assert.deepEqual(seen, [[0, [1, 2]], [1, [10, 11]], [1, [20, 21]], [1, [30]]]);
  });

  it('keeps what onEntries threw for finish() and hands nothing more over', async () => {
    let calls = 0;
    const receiver = new ScanBatchReceiver(() => {
      calls++;
      throw new Error('consumer failed');
    });
    assert.doesNotThrow(() => receiver.onBatch(records(1, 1), 0));
    receiver.onBatch(records(2, 1), 0);
    await assert.rejects(receiver.finish(0, 2, records(3, 1)), /consumer failed/);
    assert.equal(calls, 1);
  });

  it('does not call onEntries for an empty rest', async () => {
    let calls = 0;
    const receiver = new ScanBatchReceiver(() => calls++);
    await receiver.finish(0, 0, new ArrayBuffer(0));
    assert.equal(calls, 0);
  });
});
