import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../test/agent/fake-clock.js';
import { FakeListerWatcher, httpError, item } from '../test/kube/fake-lister-watcher.js';
import { RestartingListWatch, type ListWatchHandlers } from './list-watch.js';
import type { WatchListMode } from './watch-list.js';

// The list/watch against a scripted ListerWatcher and a fake clock: every request it makes and
// every call it hands its handlers is checked, and time moves only when a test moves it.

interface Thing {
  name: string;
  rv: string;
}

const SELECTORS = { labelSelector: 'app=web', fieldSelector: 'spec.nodeName=n1' };

interface Rig {
  lw: RestartingListWatch<Thing>;
  fake: FakeListerWatcher;
  clock: FakeClock;
  /** What the handlers were told, in order. */
  log: string[];
  held: Map<string, Thing>;
}

function rig(options: { watchList?: WatchListMode; backoffMaxMs?: number; random?: () => number; storeKeys?: boolean; relisted?: boolean } = {}): Rig {
  const fake = new FakeListerWatcher();
  const clock = new FakeClock();
  const log: string[] = [];
  const held = new Map<string, Thing>();
  const handlers: ListWatchHandlers<Thing> = {
    upsert: (t) => { held.set(t.name, t); log.push(`upsert ${t.name}`); },
    remove: (key, obj) => { held.delete(key); log.push(`remove ${key}${obj === undefined ? '' : ' (event)'}`); },
    synced: (via) => log.push(`synced ${via}`),
    restarting: (error, delayMs) => log.push(`restarting ${delayMs} ${error instanceof Error ? error.message : String(error)}`),
    relisting: (delayMs) => log.push(`relisting ${delayMs}`),
    fellBack: () => log.push('fellBack'),
    ...(options.relisted === true ? { relisted: () => log.push('relisted') } : {}),
    ...(options.storeKeys === true ? { keys: () => held.keys() } : {}),
  };
  const lw = new RestartingListWatch<Thing>(
    {
      listerWatcher: fake,
      ...SELECTORS,
      pageSize: 2,
      project: (raw) => {
        const meta = (raw as { metadata: { name: string; resourceVersion: string } }).metadata;
        return { name: meta.name, rv: meta.resourceVersion };
      },
      keyOf: (t) => t.name,
      clock,
      backoffMaxMs: options.backoffMaxMs ?? 30_000,
      random: options.random ?? (() => 0.5),
      watchList: options.watchList ?? 'off',
    },
    handlers,
  );
  return { lw, fake, clock, log, held };
}

/** Takes what the log gained since the last call. */
function drain(log: string[]): string[] {
  return log.splice(0);
}

/** Started, listed a and b at resourceVersion 10, watching from there. */
async function synced(r: Rig): Promise<void> {
  r.fake.answer({ items: [item('a', '5'), item('b', '6')], resourceVersion: '10' });
  r.lw.start();
  await r.clock.advance(0);
  assert.deepEqual(drain(r.log), ['upsert a', 'upsert b', 'synced list']);
}

test('first list from the watch cache (resourceVersion=0), synced once, then a watch from the list\'s resourceVersion with bookmarks', async () => {
  const r = rig();
  assert.equal(r.lw.synced, false);
  await synced(r);
  assert.deepEqual(r.fake.lists, [{ ...SELECTORS, resourceVersion: '0' }]);
  assert.deepEqual(r.fake.watches.map((w) => w.request), [{ ...SELECTORS, resourceVersion: '10', allowWatchBookmarks: true, timeoutSeconds: 300 }]);
  assert.equal(r.lw.synced, true);
  assert.equal(r.lw.live, true);
  r.fake.lastWatch.send('ADDED', item('c', '11'));
  r.fake.lastWatch.send('MODIFIED', item('a', '12'));
  r.fake.lastWatch.send('DELETED', item('b', '13'));
  assert.deepEqual(drain(r.log), ['upsert c', 'upsert a', 'remove b (event)']);
  assert.deepEqual([...r.held.keys()].sort(), ['a', 'c']);
  await r.lw.stop();
  assert.equal(r.fake.lastWatch.aborted, true, 'stop ends the watch');
});

test('bookmarks advance the resourceVersion (and the progress) without touching the store; a watch that ends normally resumes from there', async () => {
  const r = rig();
  await synced(r);
  await r.clock.advance(5000);
  assert.equal(r.lw.progressAgeMs(), 5000);
  r.fake.lastWatch.bookmark('15');
  assert.equal(r.lw.progressAgeMs(), 0, 'a bookmark is progress');
  assert.deepEqual(drain(r.log), [], 'a bookmark applies nothing');
  r.fake.lastWatch.end(null); // the server's timeout
  await r.clock.advance(0);
  assert.equal(r.fake.watches.length, 2);
  assert.equal(r.fake.lastWatch.request.resourceVersion, '15');
  assert.equal(r.fake.lists.length, 1, 'no relist after a normal end');
  assert.deepEqual(drain(r.log), []);
  await r.lw.stop();
});

test('a watch that ends at once without an event is retried after the backoff, not in a hot loop', async () => {
  const r = rig();
  await synced(r);
  r.fake.lastWatch.end(null);
  assert.deepEqual(drain(r.log), ['restarting 375 watch /fake/things: closed at once without an event']);
  await r.clock.advance(374);
  assert.equal(r.fake.watches.length, 1);
  await r.clock.advance(1);
  assert.equal(r.fake.watches.length, 2);
  await r.lw.stop();
});

for (const storeKeys of [false, true]) {
  test(`410 Gone relists: at once from the watch cache at the last synced version, then a 410 list reads consistently in pages; what the relist lacks is removed (${storeKeys ? 'the handler\'s keys' : 'keys kept by the list/watch'})`, async () => {
    const r = rig({ storeKeys });
    await synced(r);
    r.fake.lastWatch.send('ADDED', item('c', '11'));
    r.fake.lastWatch.bookmark('14');
    drain(r.log);
    // The watch's resourceVersion is too old: an ERROR event with 410, then the stream ends.
    r.fake.lastWatch.send('ERROR', { kind: 'Status', code: 410, message: 'too old resource version' });
    r.fake.answer({ items: [item('a', '5'), item('c', '11')], resourceVersion: '20' });
    r.fake.lastWatch.end(null);
    assert.equal(r.lw.live, false, 'a gap until the relist');
    await r.clock.advance(0);
    assert.deepEqual(r.fake.lists[1], { ...SELECTORS, resourceVersion: '14' }, 'the cache at the last version seen');
    assert.deepEqual(drain(r.log), ['relisting 0', 'upsert a', 'upsert c', 'remove b']);
    assert.equal(r.lw.live, true);
    assert.equal(r.fake.lastWatch.request.resourceVersion, '20');

    // Again at once: now with the backoff. The cache list itself is too old (HTTP 410):
    // the next list is a consistent read of etcd in pages, followed through its tokens.
    r.fake.answer(httpError(410));
    r.fake.lastWatch.end(httpError(410));
    assert.deepEqual(drain(r.log), ['relisting 375']);
    await r.clock.advance(375);
    assert.deepEqual(r.fake.lists[2], { ...SELECTORS, resourceVersion: '20' });
    assert.deepEqual(drain(r.log), ['relisting 750']);
    r.fake.answer({ items: [item('c', '11'), item('d', '30')], resourceVersion: '31', continue: 'page2' }, { items: [item('e', '31')], continue: '' });
    await r.clock.advance(750);
    assert.deepEqual(r.fake.lists.slice(3), [{ ...SELECTORS, limit: 2 }, { ...SELECTORS, limit: 2, continue: 'page2' }]);
    assert.deepEqual(drain(r.log), ['upsert c', 'upsert d', 'upsert e', 'remove a']);
    assert.deepEqual([...r.held.keys()].sort(), ['c', 'd', 'e']);
    assert.equal(r.fake.lastWatch.request.resourceVersion, '31', 'the watch starts at the first page\'s version');

    // The next relist reads the cache again.
    r.fake.lastWatch.end(httpError(410));
    r.fake.answer({ items: [item('c', '11')], resourceVersion: '40' });
    await r.clock.advance(30_000);
    assert.deepEqual(r.fake.lists[5], { ...SELECTORS, resourceVersion: '31' });
    assert.equal(r.log.filter((l) => l.startsWith('synced')).length, 0, 'synced is told once, at the first list');
    await r.lw.stop();
  });
}

test('errors restart with a jittered exponential backoff up to its cap; it resets after a stable period, not on the first success', async () => {
  const r = rig({ backoffMaxMs: 2000 });
  r.fake.answer(httpError(500), httpError(500), httpError(500), httpError(500), httpError(500));
  r.lw.start();
  await r.clock.advance(0);
  for (const delay of [375, 750, 1500, 2000]) {
    assert.deepEqual(drain(r.log), [`restarting ${delay} HTTP 500`]);
    const lists = r.fake.lists.length;
    await r.clock.advance(delay - 1);
    assert.equal(r.fake.lists.length, lists, `waits ${delay} ms`);
    await r.clock.advance(1);
    assert.equal(r.fake.lists.length, lists + 1);
  }
  assert.deepEqual(drain(r.log), ['restarting 2000 HTTP 500'], 'capped');
  r.fake.answer({ items: [item('a')], resourceVersion: '10' });
  await r.clock.advance(2000);
  assert.deepEqual(drain(r.log), ['upsert a', 'synced list']);
  // One success is not a stable period: the next failure still waits the capped delay.
  r.fake.lastWatch.end(httpError(503));
  assert.deepEqual(drain(r.log), ['restarting 2000 HTTP 503']);
  await r.clock.advance(2000);
  assert.equal(r.fake.watches.length, 2, 'the watch resumes from its version, no relist');
  // Two minutes without a failure: the backoff starts over, jittered (random 0.5: 250 -> 375).
  await r.clock.advance(120_000);
  r.fake.lastWatch.end(httpError(503));
  assert.deepEqual(drain(r.log), ['restarting 375 HTTP 503']);
  await r.lw.stop();
});

test('the jitter stretches each delay within [d, 2d)', async () => {
  for (const [random, delay] of [[0, 250], [0.999, 500]] as const) {
    const r = rig({ random: () => random });
    r.fake.answer(httpError(500));
    r.lw.start();
    await r.clock.advance(0);
    assert.deepEqual(drain(r.log), [`restarting ${delay} HTTP 500`]);
    await r.lw.stop();
  }
});

test('resync(): a consistent list replaces the view and answers true; the watch in flight is replaced', async () => {
  const r = rig();
  await synced(r);
  r.fake.answer({ items: [item('a', '5'), item('c', '40')], resourceVersion: '50' });
  const first = r.lw.resync();
  const second = r.lw.resync();
  assert.equal(r.fake.watches[0]?.aborted, true);
  await r.clock.advance(0);
  assert.equal(await first, true);
  assert.equal(await second, true, 'calls made while one is pending share it');
  assert.deepEqual(r.fake.lists.slice(1), [{ ...SELECTORS, limit: 2 }], 'one consistent read, not the cache');
  assert.deepEqual(drain(r.log), ['upsert a', 'upsert c', 'remove b']);
  assert.equal(r.fake.lastWatch.request.resourceVersion, '50');
  await r.lw.stop();
});

test('resync() during a backoff keeps its delay (a down API is not hammered), then lists consistently; a failed attempt answers false', async () => {
  const r = rig();
  await synced(r);
  r.fake.answer(httpError(500));
  r.fake.lastWatch.end(httpError(500));
  assert.deepEqual(drain(r.log), ['restarting 375 HTTP 500']);
  let answered: boolean | undefined;
  void r.lw.resync().then((applied) => { answered = applied; });
  await r.clock.advance(374);
  assert.equal(r.fake.lists.length, 1, 'still waiting out the backoff');
  await r.clock.advance(1);
  assert.deepEqual(r.fake.lists[1], { ...SELECTORS, limit: 2 });
  assert.equal(answered, false, 'that list failed');
  assert.deepEqual(drain(r.log), ['restarting 750 HTTP 500']);
  r.fake.answer({ items: [item('a')], resourceVersion: '60' });
  const again = r.lw.resync();
  await r.clock.advance(750);
  assert.equal(await again, true);
  assert.deepEqual(r.fake.lists[2], { ...SELECTORS, limit: 2 }, 'still a consistent read');
  assert.deepEqual(drain(r.log), ['upsert a', 'remove b']);
  await r.lw.stop();
  assert.equal(await r.lw.resync(), false, 'stopped');
});

test('resync() during a long backoff tries within two seconds: a caller is waiting on the view', async () => {
  const r = rig({ backoffMaxMs: 60_000 });
  await synced(r);
  // Failures until the backoff is long: 375, 750, 1500, 3000 ms.
  r.fake.lastWatch.end(httpError(500));
  for (const delay of [375, 750, 1500]) {
    await r.clock.advance(delay);
    r.fake.lastWatch.end(httpError(500));
  }
  assert.deepEqual(drain(r.log).at(-1), 'restarting 3000 HTTP 500');
  r.fake.answer({ items: [item('a')], resourceVersion: '70' });
  let answered: boolean | undefined;
  void r.lw.resync().then((applied) => { answered = applied; });
  await r.clock.advance(1499);
  assert.equal(answered, undefined);
  await r.clock.advance(1);
  assert.equal(answered, true, 'listed 1.5 s later, not 3 s');
  await r.lw.stop();
});

test('streaming list: the initial events are applied as they come, synced at the end bookmark; after a 410 the next one replaces the view', async () => {
  const r = rig({ watchList: 'auto' });
  r.lw.start();
  await r.clock.advance(0);
  assert.deepEqual(r.fake.watches[0]?.request, { ...SELECTORS, sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: true, resourceVersion: '', timeoutSeconds: 300 });
  r.fake.lastWatch.send('ADDED', item('a', '3'));
  r.fake.lastWatch.send('ADDED', item('b', '4'));
  assert.equal(r.lw.synced, false, 'not before the end marker');
  r.fake.lastWatch.bookmark('7', true);
  r.fake.lastWatch.send('MODIFIED', item('a', '8'));
  assert.deepEqual(drain(r.log), ['upsert a', 'upsert b', 'synced stream', 'upsert a']);
  r.fake.lastWatch.end(httpError(410));
  await r.clock.advance(0);
  assert.equal(r.fake.lastWatch.request.resourceVersion, '8', 'not older than the last version seen');
  r.fake.lastWatch.send('ADDED', item('a', '9'));
  r.fake.lastWatch.bookmark('10', true);
  assert.deepEqual(drain(r.log), ['relisting 0', 'upsert a', 'remove b']);
  assert.equal(r.fake.lists.length, 0, 'never a LIST');
  await r.lw.stop();
});

for (const [how, refuse] of [
  ['refuses it (HTTP 422)', (r: Rig) => r.fake.lastWatch.end(httpError(422, 'resourceVersionMatch is forbidden for watch'))],
  ['ignores it (a plain watch: a MODIFIED first)', (r: Rig) => r.fake.lastWatch.send('MODIFIED', item('a'))],
] as const) {
  test(`streaming list (auto) on a server that ${how}: lists from the watch cache at once, and for good`, async () => {
    const r = rig({ watchList: 'auto' });
    r.lw.start();
    await r.clock.advance(0);
    r.fake.answer({ items: [item('a')], resourceVersion: '10' }, { items: [item('a')], resourceVersion: '20' });
    refuse(r);
    await r.clock.advance(0);
    assert.deepEqual(drain(r.log), ['fellBack', 'upsert a', 'synced list']);
    assert.deepEqual(r.fake.lists, [{ ...SELECTORS, resourceVersion: '0' }]);
    assert.equal(r.fake.watches[0]?.open, false, 'the refused stream is over');
    assert.equal(r.fake.lastWatch.request.sendInitialEvents, undefined, 'then a plain watch');
    r.fake.lastWatch.end(httpError(410));
    await r.clock.advance(0);
    assert.equal(r.fake.lists.length, 2, 'a 410 relists with a list, not a stream');
    assert.equal(r.fake.watches.filter((w) => w.request.sendInitialEvents === true).length, 1);
    await r.lw.stop();
  });
}

test('streaming list (auto) that fails three times in a row before its end marker: lists after the backoff; with `on` it never lists', async () => {
  const auto = rig({ watchList: 'auto' });
  auto.lw.start();
  await auto.clock.advance(0);
  auto.fake.lastWatch.end(httpError(500));
  await auto.clock.advance(375);
  auto.fake.lastWatch.send('ADDED', item('a'));
  auto.fake.lastWatch.end(null); // ended before its end marker
  await auto.clock.advance(750);
  auto.fake.answer({ items: [item('a')], resourceVersion: '10' });
  auto.fake.lastWatch.end(httpError(503));
  assert.deepEqual(drain(auto.log), ['restarting 375 HTTP 500', 'upsert a', 'restarting 750 watch /fake/things: the streaming list ended before its initial-events-end bookmark', 'fellBack']);
  await auto.clock.advance(1499);
  assert.equal(auto.fake.lists.length, 0, 'the fallback list waits the backoff');
  await auto.clock.advance(1);
  assert.deepEqual(drain(auto.log), ['upsert a', 'synced list']);
  await auto.lw.stop();

  const on = rig({ watchList: 'on' });
  on.lw.start();
  await on.clock.advance(0);
  on.fake.lastWatch.end(httpError(422, 'forbidden'));
  assert.match(drain(on.log).join(), /^restarting 375 the API server does not serve streaming lists/);
  await on.clock.advance(375);
  assert.equal(on.fake.watches.length, 2);
  assert.equal(on.fake.lists.length, 0);
  await on.lw.stop();
});

test('a stopped list/watch ignores what its last watch still delivers', async () => {
  const r = rig();
  await synced(r);
  const watch = r.fake.lastWatch;
  await r.lw.stop();
  watch.aborted = false; // a late event from a stream the transport had not closed yet
  watch.send('ADDED', item('late'));
  watch.end(httpError(500));
  await r.clock.advance(60_000);
  assert.deepEqual(drain(r.log), []);
  assert.equal(r.fake.watches.length, 1);
});

// What `relisted` protects: an object created and deleted while the watch was down or stalled is
// in no event and no list; the agent's conntrack sweep runs again when told so.
test('relisted: after a relist that followed a watch failure or a silence, not after a resync of a live watch, never for the first list', async () => {
  const r = rig({ relisted: true });
  await synced(r);
  r.fake.lastWatch.send('ADDED', item('c', '11'));
  drain(r.log);
  r.fake.answer({ items: [item('a', '5'), item('b', '6'), item('c', '11')], resourceVersion: '12' });
  assert.equal(await Promise.all([r.lw.resync(), r.clock.advance(0)]).then(([applied]) => applied), true);
  assert.deepEqual(drain(r.log), ['upsert a', 'upsert b', 'upsert c'], 'the watch had just delivered: nothing was missed');
  // A 410: the relist may have missed what came and went.
  r.fake.lastWatch.send('ERROR', { kind: 'Status', code: 410, message: 'too old resource version' });
  r.fake.answer({ items: [item('a', '5')], resourceVersion: '20' });
  r.fake.lastWatch.end(null);
  await r.clock.advance(0);
  assert.deepEqual(drain(r.log), ['relisting 0', 'upsert a', 'remove b', 'remove c', 'relisted']);
  // Silence (a stalled watch looks the same) longer than 2 s, then a resync: relisted too.
  await r.clock.advance(2500);
  r.fake.answer({ items: [item('a', '5')], resourceVersion: '30' });
  const applied = r.lw.resync();
  await r.clock.advance(0);
  assert.equal(await applied, true);
  assert.deepEqual(drain(r.log), ['upsert a', 'relisted']);
  await r.lw.stop();
});
