/**
 * The janitor's EndpointSlice list/watch (SliceWatch) against the API stand-in (test/apiserver)
 * speaking the API's wire format for `/apis/discovery.k8s.io/v1/endpointslices`: a paginated
 * list (limit/continue) with resourceVersion, chunked watch events, bookmarks, and 410 Gone
 * that forces a relist.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../../time/clock.js';
import { createSliceWatch, ENDPOINT_SLICES_PATH, SLICE_PAGE_SIZE, type SliceWatch } from '../../agent/stale/index.js';
import { loadKubeConnection } from '../../kube/load.js';
import { OwnershipIndex } from '../../src/stale/index.js';
import { FakeApiServer, type JsonObject } from '../apiserver/server.js';
import { slice } from './fixtures.js';

const PAGE = SLICE_PAGE_SIZE;

function ip(i: number): string {
  return `10.0.${Math.floor(i / 250)}.${(i % 250) + 1}`;
}

async function until(what: string, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(ok(), what);
}

describe('SliceWatch (EndpointSlice list/watch against the API stand-in)', () => {
  const api = new FakeApiServer();
  const dir = mkdtempSync(join(tmpdir(), 'janitor-w-'));
  let watch: SliceWatch | undefined;

  before(async () => {
    await api.start();
    // More slices than one page: served whole from the watch cache (resourceVersion=0 ignores limit).
    for (let i = 0; i < PAGE + 100; i++) api.putEndpointSlice(slice(`s${i}`, `svc${i}`, [{ port: 53, protocol: 'UDP' }], [{ ip: ip(i) }]) as JsonObject);
  });

  after(async () => {
    await watch?.stop();
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists from the watch cache before it says synced, then follows watch events and bookmarks, and relists after 410', async () => {
    const connection = await loadKubeConnection({ kubeconfig: api.writeKubeconfig(join(dir, 'kubeconfig')) });
    const index = new OwnershipIndex();
    let ownedAtSync = 0;
    let removals = 0;
    const restarts: unknown[] = [];
    const synced = new Promise<void>((resolve) => {
      watch = createSliceWatch({ connection, clock: systemClock, backoffMaxMs: 1000 }, {
        upsert: (s) => { removals += index.upsert(s).removed; },
        remove: (s) => { removals += index.remove(s).removed; },
        synced: () => {
          ownedAtSync = index.sliceCount;
          resolve();
        },
        restarting: (error) => restarts.push(error),
      });
      watch.start();
    });
    await synced;
    assert.equal(ownedAtSync, PAGE + 100, 'every slice was applied before synced');
    const lists = (): RecordedList[] => api.requests.filter((r) => r.path === ENDPOINT_SLICES_PATH && r.query.watch === undefined);
    assert.equal(lists().length, 1, 'one list from the watch cache (streamed, not paginated)');
    assert.equal(lists()[0]?.query.resourceVersion, '0');

    await until('the watch is open', () => api.openWatches === 1);
    const watchRequest = api.requests.find((r) => r.path === ENDPOINT_SLICES_PATH && r.query.watch === 'true');
    assert.equal(watchRequest?.query.allowWatchBookmarks, 'true');
    assert.ok(Number(watchRequest?.query.resourceVersion) > 0, 'watches from the list\'s resourceVersion');

    api.putEndpointSlice(slice('s0', 'svc0', [{ port: 53, protocol: 'UDP' }], [{ ip: ip(0) }, { ip: '10.9.0.3' }]) as JsonObject);
    await until('MODIFIED applied', () => index.owns('udp', '10.9.0.3', 53));
    api.sendBookmarks(); // must not disturb anything
    api.deleteEndpointSlice('default', 's1');
    await until('DELETED applied', () => !index.owns('udp', ip(1), 53));
    assert.equal(removals, 1);

    // 410: the watch ends with an ERROR Status; a slice deleted meanwhile is gone from the relist.
    const before410 = lists().length;
    api.expireResourceVersions();
    api.deleteEndpointSlice('default', 's2');
    await until('relisted', () => lists().length > before410);
    await until('the relist removed the slice the watch never reported', () => !index.owns('udp', ip(2), 53));
    assert.equal(index.owns('udp', '10.9.0.3', 53), true);
    assert.equal(index.sliceCount, PAGE + 100 - 2);
  });
});

type RecordedList = FakeApiServer['requests'][number];
