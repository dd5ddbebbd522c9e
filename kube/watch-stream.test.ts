import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import type { KubeConnection } from './connection.js';
import { JsonMask } from './json-mask.js';
import { LineSplitter, streamWatch, type WatchStreamOptions } from './watch-stream.js';

test('LineSplitter: lines cut anywhere across chunks come out whole, empty lines skipped', () => {
  const text = '{"a":1}\n\n{"b":"x\\ny"}\n{"c":[1,2,3]}\n';
  const bytes = Buffer.from(text);
  for (let cut = 1; cut < bytes.length; cut++) {
    const out: string[] = [];
    const s = new LineSplitter((l) => out.push(l.toString('utf8')), 1000);
    s.write(bytes.subarray(0, cut));
    s.write(bytes.subarray(cut));
    assert.deepEqual(out, ['{"a":1}', '{"b":"x\\ny"}', '{"c":[1,2,3]}'], `cut at ${cut}`);
  }
});

test('LineSplitter: lines spanning many chunks, larger than the reused buffer, come out whole and in order', () => {
  const lines = [`{"big":"${'x'.repeat(200_000)}"}`, '{"a":1}', `{"mid":"${'y'.repeat(70_000)}"}`, '{"b":2}'];
  const bytes = Buffer.from(`${lines.join('\n')}\n`);
  for (const step of [1000, 4096, 65_536, 100_000]) {
    const out: string[] = [];
    const s = new LineSplitter((l) => out.push(l.toString('utf8')), 1 << 20);
    for (let i = 0; i < bytes.length; i += step) s.write(bytes.subarray(i, i + step));
    assert.deepEqual(out, lines, `chunks of ${step}`);
  }
});

test('LineSplitter: a line over the bound is an error, whether in one chunk or many', () => {
  const one = new LineSplitter(() => undefined, 10);
  assert.throws(() => one.write(Buffer.from('01234567890123\n')), /larger than 10 bytes/);
  const many = new LineSplitter(() => undefined, 10);
  many.write(Buffer.from('012345'));
  assert.throws(() => many.write(Buffer.from('6789012')), /larger than 10 bytes/);
});

async function serve(handler: (res: ServerResponse, url: URL) => void): Promise<{ conn: KubeConnection; close: () => Promise<void> }> {
  const server = createServer((req, res) => handler(res, new URL(req.url ?? '/', 'http://x')));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const conn: KubeConnection = { getCurrentCluster: () => ({ server: `http://127.0.0.1:${port}` }), applyToFetchOptions: () => Promise.resolve({}) };
  return { conn, close: () => new Promise((r) => server.close(() => r())) };
}

function watchUntilDone(conn: KubeConnection, query = {}, options: WatchStreamOptions = {}): Promise<{ events: Array<[string, unknown]>; error: unknown }> {
  const events: Array<[string, unknown]> = [];
  return new Promise((resolve) => {
    void streamWatch(conn, '/api/v1/pods', query, (type, object) => events.push([type, object]), (error) => resolve({ events, error }), options);
  });
}

test('streamWatch: events in order, the query carries watch=true, a server end is done(null)', async () => {
  let seen: URL | undefined;
  const { conn, close } = await serve((res, url) => {
    seen = url;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n{"type":"MODI');
    setTimeout(() => res.end('FIED","object":{"metadata":{"name":"a","x":"é"}}}\n'), 20);
  });
  try {
    const { events, error } = await watchUntilDone(conn, { resourceVersion: '7', allowWatchBookmarks: true });
    assert.equal(error, null);
    assert.deepEqual(events, [['ADDED', { metadata: { name: 'a' } }], ['MODIFIED', { metadata: { name: 'a', x: 'é' } }]]);
    assert.equal(seen?.searchParams.get('watch'), 'true');
    assert.equal(seen?.searchParams.get('resourceVersion'), '7');
  } finally {
    await close();
  }
});

test('streamWatch: a non-2xx answer is an error carrying its status code and message', async () => {
  const { conn, close } = await serve((res) => {
    res.writeHead(410, { 'content-type': 'application/json' });
    res.end('{"kind":"Status","code":410,"message":"too old resource version"}');
  });
  try {
    const { events, error } = await watchUntilDone(conn);
    assert.deepEqual(events, []);
    assert.equal((error as { statusCode?: number }).statusCode, 410);
    assert.match((error as Error).message, /too old resource version/);
  } finally {
    await close();
  }
});

test('streamWatch: a line that is not JSON ends the watch with a clear error (no crash, no silent skip)', async () => {
  const { conn, close } = await serve((res) => {
    res.writeHead(200);
    res.write('{"type":"ADDED","object":{}}\nnot json\n');
  });
  try {
    const { events, error } = await watchUntilDone(conn);
    assert.deepEqual(events, [['ADDED', {}]]);
    assert.match((error as Error).message, /not JSON: not json/);
  } finally {
    await close();
  }
});

test('streamWatch with a mask: only the kept fields arrive, and a line broken in a dropped field still ends the watch with a clear error', async () => {
  const { conn, close } = await serve((res) => {
    res.writeHead(200);
    res.write('{"type":"ADDED","object":{"metadata":{"name":"a"},"spec":{"big":[1,2]}}}\n{"type":"ADDED","object":{"spec":{"big":tru}}}\n');
  });
  try {
    const { events, error } = await watchUntilDone(conn, {}, { mask: new JsonMask({ type: true, object: { metadata: true } }) });
    assert.deepEqual(events, [['ADDED', { metadata: { name: 'a' } }]]);
    assert.match((error as Error).message, /not JSON: \{"type":"ADDED","object":\{"spec":\{"big":tru/);
  } finally {
    await close();
  }
});

test('streamWatch: abort() ends the watch without calling done', async () => {
  const { conn, close } = await serve((res) => {
    res.writeHead(200);
    res.write('{"type":"ADDED","object":{}}\n');
  });
  try {
    let done = 0;
    const events: string[] = [];
    const controller = await streamWatch(conn, '/api/v1/pods', {}, (type) => events.push(type), () => (done += 1));
    while (events.length === 0) await new Promise((r) => setTimeout(r, 5));
    controller.abort();
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(done, 0);
  } finally {
    await close();
  }
});

test('streamWatch: a watch that goes quiet (headers and one event, then nothing) ends with "no byte in" after idleMs', async () => {
  const { conn, close } = await serve((res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n');
  });
  try {
    const started = Date.now();
    const { events, error } = await watchUntilDone(conn, {}, { idleMs: 300 });
    assert.deepEqual(events.map(([type]) => type), ['ADDED']);
    assert.match(String(error), /watch \/api\/v1\/pods: no byte in 300 ms/);
    assert.ok(Date.now() - started >= 290, 'not before idleMs after the last byte');
  } finally {
    await close();
  }
});

test('streamWatch: a server that never answers ends the watch with "no byte in" too', async () => {
  const { conn, close } = await serve(() => undefined);
  try {
    const { events, error } = await watchUntilDone(conn, {}, { idleMs: 200 });
    assert.equal(events.length, 0);
    assert.match(String(error), /no byte in 200 ms/);
  } finally {
    await close();
  }
});

test('streamWatch: bytes that keep coming (an event every 100 ms for longer than idleMs) keep the watch up', async () => {
  const { conn, close } = await serve((res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    let n = 0;
    const tick = setInterval(() => {
      res.write(`{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"${++n}"}}}\n`);
      if (n === 8) {
        clearInterval(tick);
        res.end();
      }
    }, 100);
  });
  try {
    const { events, error } = await watchUntilDone(conn, {}, { idleMs: 300 });
    assert.equal(error, null);
    assert.equal(events.length, 8);
  } finally {
    await close();
  }
});
