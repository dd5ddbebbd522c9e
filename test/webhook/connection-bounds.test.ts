/**
 * Every stage of a connection is bounded, over real HTTPS: a TLS handshake that never
 * finishes, a head that never ends, a body that stops arriving (lying Content-Length,
 * unfinished chunked body, a trickle), an idle keep-alive connection; a body over the limit
 * is answered 413 and the client reads it while still uploading; `Expect: 100-continue` is
 * not invited when the answer is a refusal; the connection cap and the body budget hold.
 * The limits are shortened here; the test waits far longer than them, never times anything.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpsRequest } from 'node:https';
import { connect as connectTcp, type Socket } from 'node:net';
import { connect as connectTls, type TLSSocket } from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import { review, samplePod, send, startTestWebhook, type TestWebhook } from './harness.js';

const SHORT = { handshakeTimeoutMs: 300, headersTimeoutMs: 300, checkIntervalMs: 100, bodyIdleTimeoutMs: 300, bodyTimeoutMs: 1000, keepAliveTimeoutMs: 300, lingerMs: 1000 };
/** How long a test waits for a bounded stage to end: far past its limit, far below the old 30-120 s. */
const PATIENCE_MS = 8000;

let web: TestWebhook;
before(async () => {
  web = await startTestWebhook({ limits: SHORT, config: { logLevel: 'warn' } });
});
after(async () => {
  await web.stop();
});

function tls(w: TestWebhook = web): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = connectTls({ host: '127.0.0.1', port: w.running.port, servername: 'localhost', ca: w.ca.caCert }, () => resolve(socket));
    socket.on('error', reject);
  });
}

function tcp(w: TestWebhook = web): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connectTcp({ host: '127.0.0.1', port: w.running.port }, () => resolve(socket));
    socket.on('error', reject);
  });
}

/** Resolves true when the server closes the socket within PATIENCE_MS, false otherwise (then the socket is destroyed). */
function closedByServer(socket: Socket): Promise<boolean> {
  return new Promise((resolve) => {
    socket.on('error', () => undefined);
    socket.resume();
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(false);
    }, PATIENCE_MS);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

const HEAD = (length: number | 'chunked'): string => [
  'POST /mutate HTTP/1.1', 'Host: localhost', 'Content-Type: application/json',
  length === 'chunked' ? 'Transfer-Encoding: chunked' : `Content-Length: ${length}`, '', '',
].join('\r\n');

test('a TCP connection that never starts its TLS handshake is closed (handshakeTimeout)', async () => {
  assert.equal(await closedByServer(await tcp()), true);
});

test('a request head that never ends is closed (headersTimeout)', async () => {
  const socket = await tls();
  socket.write('POST /mutate HTTP/1.1\r\nHost: localhost\r\n');
  assert.equal(await closedByServer(socket), true);
});

test('a body shorter than its Content-Length is abandoned: the connection is closed, no answer', async () => {
  const socket = await tls();
  socket.write(`${HEAD(100_000)}{"apiVersion":`);
  let answered = '';
  socket.on('data', (c: Buffer) => (answered += c.toString()));
  assert.equal(await closedByServer(socket), true);
  assert.equal(answered, '');
});

test('an unfinished chunked body is abandoned', async () => {
  const socket = await tls();
  socket.write(`${HEAD('chunked')}10\r\n{"apiVersion":"a\r\n`);
  assert.equal(await closedByServer(socket), true);
});

test('a body that trickles in (a byte every 100 ms) is abandoned at the whole-body deadline', async () => {
  const socket = await tls();
  socket.write(HEAD(100_000));
  const trickle = setInterval(() => {
    if (!socket.destroyed) socket.write('x');
  }, 100);
  try {
    assert.equal(await closedByServer(socket), true);
  } finally {
    clearInterval(trickle);
  }
  const metrics = await send(web, { method: 'GET', path: '/metrics' });
  assert.match(metrics.text, /conndrain_webhook_admissions_total\{result="rejected",reason="stalled"\} [3-9]/);
});

test('an idle keep-alive connection is closed (keepAliveTimeout)', async () => {
  const socket = await tls();
  const body = review(samplePod());
  socket.write(`${HEAD(Buffer.byteLength(body))}${body}`);
  let answer = '';
  socket.on('data', (c: Buffer) => (answer += c.toString()));
  assert.equal(await closedByServer(socket), true);
  assert.match(answer, /^HTTP\/1\.1 200 /);
});

/** Uploads `size` bytes as fast as the socket takes them and returns the answer the client read. */
function upload(size: number, headers: Record<string, string | number> = {}): Promise<{ status: number; text: string; continued: boolean }> {
  return new Promise((resolve, reject) => {
    let continued = false;
    const req = httpsRequest({
      host: '127.0.0.1', servername: 'localhost', port: web.running.port, method: 'POST', path: '/mutate', ca: web.ca.caCert, agent: false,
      headers: { 'Content-Type': 'application/json', 'Content-Length': size, ...headers },
    }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text, continued }));
      res.on('error', reject);
    });
    req.on('error', reject);
    const chunk = Buffer.alloc(256 * 1024, 0x20);
    let sent = 0;
    const pump = (): void => {
      while (sent < size) {
        const n = Math.min(chunk.length, size - sent);
        sent += n;
        if (!req.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
          req.once('drain', pump);
          return;
        }
      }
      req.end();
    };
    if (headers['Expect'] === '100-continue') {
      req.on('continue', () => {
        continued = true;
        pump();
      });
    } else {
      pump();
    }
  });
}

test('a body over 7 MiB announced by Content-Length: the client still uploading reads the 413', async () => {
  for (let i = 0; i < 3; i++) {
    const reply = await upload(16 * 1024 * 1024);
    assert.equal(reply.status, 413);
    assert.equal((JSON.parse(reply.text) as { reason: string }).reason, 'body-too-large');
  }
});

/**
 * A client that sends its whole request before it reads (as a blocking client does): with the
 * socket closed at once, its writes meet a reset and it never reads the answer waiting for it.
 */
function uploadThenRead(size: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connectTls({ host: '127.0.0.1', port: web.running.port, servername: 'localhost', ca: web.ca.caCert }, () => {
      socket.pause();
      socket.write(HEAD(size));
      const chunk = Buffer.alloc(256 * 1024, 0x20);
      let sent = 0;
      const pump = (): void => {
        while (sent < size) {
          sent += chunk.length;
          if (!socket.write(chunk)) {
            socket.once('drain', pump);
            return;
          }
        }
        // Everything is written (or buffered): now read.
        socket.on('data', (c: Buffer) => (answer += c.toString()));
        socket.resume();
      };
      pump();
    });
    let answer = '';
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(answer));
  });
}

test('a body over 7 MiB: a client that uploads everything before it reads still gets the 413 (lingering close)', async () => {
  for (let i = 0; i < 3; i++) {
    const answer = await uploadThenRead(8 * 1024 * 1024);
    assert.match(answer, /^HTTP\/1\.1 413 /);
    assert.match(answer, /"reason":"body-too-large"/);
  }
});

test('Expect: 100-continue: a body over the limit is refused without inviting it; a good one is invited', async () => {
  const refused = await upload(16 * 1024 * 1024, { Expect: '100-continue' });
  assert.equal(refused.status, 413);
  assert.equal(refused.continued, false, 'no 100 Continue before the 413');

  const body = review(samplePod());
  const invited = await new Promise<{ status: number; continued: boolean }>((resolve, reject) => {
    let continued = false;
    const req = httpsRequest({
      host: '127.0.0.1', servername: 'localhost', port: web.running.port, method: 'POST', path: '/mutate', ca: web.ca.caCert, agent: false,
      headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), Expect: '100-continue' },
    }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, continued }));
    });
    req.on('error', reject);
    req.on('continue', () => {
      continued = true;
      req.end(body);
    });
  });
  assert.deepEqual(invited, { status: 200, continued: true });
});

test('the body budget: a body that would go past it is refused with 503 before it is read', async () => {
  const small = await startTestWebhook({ limits: { ...SHORT, bodyIdleTimeoutMs: 5000, bodyTimeoutMs: 5000, bodyBudgetBytes: 1024 * 1024 }, config: { logLevel: 'warn' } });
  try {
    // Holds 700 KiB of the 1 MiB budget while its body is still arriving.
    const holding = new Promise<void>((resolve) => small.running.server.once('request', () => resolve()));
    const holder = await tls(small);
    holder.write(`${HEAD(700 * 1024)}{`);
    await holding;
    await sleep(50);
    const socket = await tls(small);
    socket.write(`${HEAD(700 * 1024)}{`);
    let answer = '';
    socket.on('data', (c: Buffer) => (answer += c.toString()));
    await closedByServer(socket);
    assert.match(answer, /^HTTP\/1\.1 503 /);
    assert.match(answer, /"reason":"busy"/);
    assert.match(answer, /retry-after: 1/i);
    holder.destroy();
    // The holder's bytes go back to the budget when its request is aborted: a real review is admitted.
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      await sleep(100);
      status = (await send(small, { body: review(samplePod()) })).status;
    }
    assert.equal(status, 200);
  } finally {
    await small.stop();
  }
});

test('--max-connections: connections past the cap are closed at once, and accepted again below it', async () => {
  const capped = await startTestWebhook({ limits: { ...SHORT, handshakeTimeoutMs: 30_000, keepAliveTimeoutMs: 30_000 }, config: { logLevel: 'warn', maxConnections: 3 } });
  try {
    const held = [await tls(capped), await tls(capped), await tls(capped)];
    const extra = await tcp(capped);
    assert.equal(await closedByServer(extra), true);
    held[0]?.destroy();
    await sleep(200);
    assert.equal((await send(capped, { method: 'GET', path: '/healthz' })).status, 200);
    for (const s of held) s.destroy();
  } finally {
    await capped.stop();
  }
});
