/**
 * Nothing a client sends knocks the drain API over: the regression of issue 14
 * (`GET /v1/drain/%E0%A4%A` ended the process through decodeURIComponent), a handler that
 * throws, and a property test throwing arbitrary raw HTTP requests (raw TCP: random request
 * lines, headers, bodies and bytes) at the real server while three drains are held; then the
 * server still answers and each held drain ends when and how it should.
 */
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { pino } from 'pino';
import { addPod, fill, get, heldOpen, makeDrainRig, openTcp, type DrainRig } from '../../test/agent/drain-rig.js';
import { firstResponse, rawRequest } from '../../test/agent/raw-http.js';

let rig: DrainRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

/** Asserts `bytes` hold a bounded, well-formed HTTP/1.1 answer with a JSON body (none for HEAD). */
function assertJsonAnswer(bytes: Buffer, head = false): number {
  const parsed = firstResponse(bytes);
  if (typeof parsed === 'string') assert.fail(parsed);
  assert.ok(bytes.length < 4096, `answer bounded (${bytes.length} bytes)`);
  if (!head && parsed.status !== 100) {
    assert.equal(parsed.headers['content-type'], 'application/json');
    const body = JSON.parse(parsed.body) as { error?: unknown };
    if (parsed.status >= 400) assert.equal(typeof body.error, 'string', `a ${parsed.status} says why`);
  }
  return parsed.status;
}

test('regression: GET /v1/drain/%E0%A4%A is a 400 with a sentence, and the API keeps serving', async () => {
  rig = await makeDrainRig();
  const { port, cache, clock, api } = rig;
  const raw = await rawRequest(port, 'GET /v1/drain/%E0%A4%A HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  assert.equal(assertJsonAnswer(raw.bytes), 400);
  const viaClient = await get(port, '/v1/drain/%E0%A4%A').answer;
  assert.equal(viaClient.status, 400);
  assert.match(String(viaClient.body.error), /not valid percent-encoding/);
  addPod(cache, 'web', '10.2.0.1', { minDrain: '1s' });
  const { answer } = get(port, '/v1/drain/drain-web');
  await heldOpen(api, 1);
  await clock.advance(1000);
  assert.equal((await answer).status, 200);
});

test('a handler that throws is answered 500 and logged; the next request is served', async () => {
  const lines: string[] = [];
  const logger = pino({ level: 'error' }, { write: (l: string) => void lines.push(l) });
  rig = await makeDrainRig({
    logger,
    lookup: (cache, id) => {
      if (id === 'drain-boom') throw new Error('lookup exploded');
      return cache.byDrain(id);
    },
  });
  const { status, body } = await get(rig.port, '/v1/drain/drain-boom').answer;
  assert.equal(status, 500);
  assert.equal(typeof body.error, 'string');
  assert.ok(lines.some((l) => l.includes('lookup exploded')), 'the exception is logged');
  assert.equal((await get(rig.port, '/v1/drain/drain-nobody').answer).status, 404);
});

test('methods, targets, headers and sizes: each gets a bounded JSON answer', async () => {
  rig = await makeDrainRig();
  const { port } = rig;
  const cases: Array<[string, number]> = [
    ['HEAD /v1/drain/x HTTP/1.1\r\nHost: h\r\n\r\n', 405],
    ['DELETE /v1/drain/x HTTP/1.1\r\nHost: h\r\n\r\n', 405],
    ['CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: h\r\n\r\n', 405],
    ['GET http://127.0.0.1:9901/v1/drain/x?y=1 HTTP/1.1\r\n\r\n', 404],
    ['GET * HTTP/1.1\r\nHost: h\r\n\r\n', 400],
    ['GET /healthz HTTP/1.0\r\n\r\n', 404],
    [`GET /v1/drain/${'a'.repeat(5000)} HTTP/1.1\r\nHost: h\r\n\r\n`, 404],
    [`GET /v1/drain/x HTTP/1.1\r\nHost: h\r\nX-Big: ${'b'.repeat(40_000)}\r\n\r\n`, 431],
    ['GET /v1/drain/x HTTP/1.1\r\nHost: h\r\nContent-Length: 999999999\r\n\r\nsome', 404],
    ['GET /v1/drain/x HTTP/1.1\r\nHost: h\r\nContent-Length: nope\r\n\r\n', 400],
    ['\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03', 400],
    ['GET /v1/drain/x HTTP/1.1\r\nHost: h', 400],
    // Node's own answer to an unknown Expect was a 417 with an empty chunked body (property test find).
    ['GET /v1/drain/x HTTP/1.1\r\nHost: h\r\nExpect: chunked\r\n\r\n\x00', 417],
  ];
  for (const [request, expected] of cases) {
    const reply = await rawRequest(port, Buffer.from(request, 'latin1'));
    assert.equal(assertJsonAnswer(reply.bytes, request.startsWith('HEAD')), expected, JSON.stringify(request.slice(0, 80)));
  }
  const long = await get(port, `/v1/drain/${'%zz'.repeat(3000)}`).answer;
  assert.equal(long.status, 400);
  assert.ok(String(long.body.error).length < 400, 'the echoed id is bounded');
});

const TOKEN = fc.stringMatching(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,12}$/);
const PRINTABLE = fc.stringMatching(/^[\x20-\x7e]{0,64}$/);
const HELD_IDS = ['drain-a', 'drain-b', 'drain-c'];

/** A request target: around the drain path, percent-encoding (valid or not), absolute-form, anything. */
const target = fc.oneof(
  fc.constantFrom(...HELD_IDS, 'drain-nobody', '', '..', '%E0%A4%A', '%', '%zz', '%C0%AF', '%00').map((id) => `/v1/drain/${id}`),
  fc.stringMatching(/^(%[0-9A-Fa-f]{0,2}|[A-Za-z0-9._~/-]){0,40}$/).map((s) => `/v1/drain/${s}`),
  fc.tuple(fc.constantFrom('http', 'https', 'x'), PRINTABLE.map((s) => s.replace(/[\s/?#]/g, '')), fc.constantFrom(...HELD_IDS, '%E0%A4%A')).map(([scheme, host, id]) => `${scheme}://${host}/v1/drain/${id}`),
  fc.stringMatching(/^[\x21-\x7e]{0,80}$/),
  fc.constantFrom('*', '/', '/v1/drain', '/v1/drain/', `/v1/drain/${'x'.repeat(3000)}`),
);

/** A request as a client would write it, valid or not in every part, with a body or none. */
const structured = fc.record({
  method: fc.oneof(fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'TRACE', 'PATCH', 'CONNECT', 'PRI', 'get'), TOKEN),
  target,
  version: fc.constantFrom('HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/0.9', 'HTTP/1.1 junk', 'http/1.1', ''),
  headers: fc.array(fc.oneof(
    fc.tuple(TOKEN, PRINTABLE),
    fc.tuple(fc.constantFrom('Host', 'Content-Length', 'Transfer-Encoding', 'Expect', 'Upgrade', 'Connection', 'Content-Encoding'), fc.oneof(PRINTABLE, fc.constantFrom('chunked', '100-continue', '0', '5', '-1', 'websocket', 'close', 'gzip'))),
    fc.tuple(TOKEN, fc.integer({ min: 0, max: 20_000 }).map((n) => 'v'.repeat(n))),
  ), { maxLength: 6 }),
  body: fc.uint8Array({ maxLength: 256 }),
  lineEnd: fc.constantFrom('\r\n', '\n'),
  /** Mostly with a Host header: without one Node answers before any handler runs. */
  host: fc.constantFrom(true, true, true, false),
}).map((r) => {
  const headers: Array<[string, string]> = r.host ? [['Host', '127.0.0.1:9901'], ...r.headers] : r.headers;
  const head = `${r.method} ${r.target} ${r.version}`.trimEnd() + r.lineEnd + headers.map(([k, v]) => `${k}: ${v}${r.lineEnd}`).join('') + r.lineEnd;
  return Buffer.concat([Buffer.from(head, 'latin1'), Buffer.from(r.body)]);
});

const anyBytes = fc.uint8Array({ minLength: 1, maxLength: 600 }).map((b) => Buffer.from(b));

test('property: arbitrary raw requests never end the process; held drains still end correctly', async () => {
  rig = await makeDrainRig({ maxDrains: 64 });
  const { api, cache, clock, port, table, finished } = rig;
  addPod(cache, 'a', '10.2.0.1', { drain: '60s', minDrain: '5s' });
  addPod(cache, 'b', '10.2.0.2', { drain: '60s', minDrain: '5s' });
  addPod(cache, 'c', '10.2.0.3', { drain: '60s', minDrain: '5s' });
  await fill(table, [openTcp('10.2.0.2')]);
  const held = HELD_IDS.map((id) => get(port, `/v1/drain/${id}`));
  // Awaited below; this only keeps a failed run from reporting them as unhandled too.
  for (const h of held) h.answer.catch(() => undefined);
  await heldOpen(api, 3);

  let answered = 0;
  await fc.assert(
    fc.asyncProperty(fc.oneof({ arbitrary: structured, weight: 4 }, { arbitrary: anyBytes, weight: 1 }), async (payload) => {
      const reply = await rawRequest(port, payload, { idleMs: 150 });
      assert.equal(reply.error, undefined, 'the server still accepts connections');
      if (reply.bytes.length > 0) {
        const parsed = firstResponse(reply.bytes);
        if (typeof parsed === 'string') assert.fail(`${parsed} for ${JSON.stringify(payload.toString('latin1').slice(0, 120))}`);
        assert.ok(reply.bytes.length < 8192, 'answers are bounded');
        // A HEAD answer has no body (what follows is the next answer on the connection).
        const head = /^HEAD[ \t]/.test(payload.toString('latin1'));
        if (!head && parsed.body !== '' && parsed.status >= 200) assert.doesNotThrow(() => JSON.parse(parsed.body), `JSON body for ${JSON.stringify(payload.toString('latin1').slice(0, 120))}`);
        answered += 1;
      }
    }),
    { numRuns: 250 },
  );
  assert.ok(answered > 150, `most requests answered (${answered})`);

  // The held drains are unharmed: the API still serves, a and c end idle at min-drain,
  // b (open flow) only once its flow closes.
  await heldOpen(api, 3);
  assert.equal(finished.length, 0, 'no drain ended early');
  await clock.advance(5000);
  const [a, , c] = held;
  for (const [call, pod] of [[a, 'shop/a'], [c, 'shop/c']] as const) {
    const { status, body } = await call!.answer;
    assert.equal(status, 200);
    assert.equal(body.pod, pod);
    assert.equal(body.ended, 'idle');
    assert.equal(body.elapsedMs, 5000);
  }
  await clock.advance(2000);
  assert.equal(api.held, 1, 'b still held: its flow is open');
  for (const e of table.entries()) table.expire(e.id);
  await clock.advance(1000);
  const b = await held[1]!.answer;
  assert.equal(b.status, 200);
  assert.equal(b.body.ended, 'idle');
  assert.equal(b.body.elapsedMs, 8000);
  assert.deepEqual(finished.map((s) => s.pod).sort(), ['shop/a', 'shop/b', 'shop/c']);
});
