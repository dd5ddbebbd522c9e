/**
 * The shutdown sequence over real HTTPS: /readyz turns 503 at once while admissions keep
 * being answered on the same keep-alive connections through the propagation delay (none
 * lost or reset); after it, idle keep-alive connections are closed, answers carry
 * `Connection: close`, and at the shutdown timeout every socket left is destroyed, a TCP
 * connection that never finished its TLS handshake included.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request as httpsRequest } from 'node:https';
import { connect as connectTcp, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { review, samplePod, send, startTestWebhook } from './harness.js';

interface ReviewReply { response: { allowed: boolean } }

test('SIGTERM under load: /readyz 503 at once, every admission answered through the delay, idle connections closed after it', async () => {
  const web = await startTestWebhook({ config: { shutdownDelayMs: 1500, shutdownTimeoutMs: 3000, logLevel: 'warn' } });
  const agent = new Agent({ keepAlive: true, maxSockets: 6, ca: web.ca.caCert });
  const body = review(samplePod());
  const failures: string[] = [];
  let answered = 0;
  let closeHeaders = 0;
  let stopLoad = false;
  const worker = async (): Promise<void> => {
    while (!stopLoad) {
      try {
        const reply = await send(web, { body, agent });
        if (reply.status === 200 && (reply.json as ReviewReply).response.allowed) answered++;
        else failures.push(`status ${reply.status}`);
        if (reply.headers['connection'] === 'close') closeHeaders++;
      } catch (error) {
        failures.push(String(error));
      }
    }
  };
  try {
    const load = Promise.all(Array.from({ length: 6 }, () => worker()));
    await sleep(300);
    const before = answered;
    const closing = web.running.close();
    // /readyz on a new connection: 503 while the listener is still open.
    const ready = await send(web, { method: 'GET', path: '/readyz' });
    assert.equal(ready.status, 503);
    assert.equal(ready.text, 'shutting down');
    // The API server keeps sending until the endpoint removal reaches it: stop the load
    // well inside the delay, as it would.
    await sleep(700);
    stopLoad = true;
    await load;
    assert.deepEqual(failures, [], `${failures.length} failed of ${answered + failures.length}`);
    assert.ok(answered > before, 'admissions were answered during the delay');
    assert.equal(closeHeaders, 0, 'answers inside the delay keep their connection');
    const idleBefore = Object.values(agent.freeSockets).flat().length;
    assert.ok(idleBefore > 0, 'idle keep-alive connections exist before the delay ends');
    await closing;
    // The client sees the server's FIN a moment after the server is done.
    for (let i = 0; i < 100 && Object.values(agent.freeSockets).flat().length > 0; i++) await sleep(50);
    assert.equal(Object.values(agent.freeSockets).flat().length, 0, 'idle keep-alive connections were closed by the server');
    await assert.rejects(send(web, { method: 'GET', path: '/healthz' }), /ECONNREFUSED/);
  } finally {
    agent.destroy();
    await web.stop();
  }
});

test('after the delay, an in-flight admission is answered with Connection: close', async () => {
  const web = await startTestWebhook({ config: { shutdownDelayMs: 300, shutdownTimeoutMs: 5000, logLevel: 'warn' } });
  try {
    const body = review(samplePod());
    const half = Math.floor(body.length / 2);
    const received = new Promise<void>((resolve) => web.running.server.once('request', () => resolve()));
    let finishBody = (): void => undefined;
    const inFlight = new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
      const req = httpsRequest({ host: '127.0.0.1', servername: 'localhost', port: web.running.port, method: 'POST', path: '/mutate', ca: web.ca.caCert, agent: false, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers['connection'] }));
      });
      req.on('error', reject);
      req.write(body.slice(0, half));
      finishBody = () => req.end(body.slice(half));
    });
    await received;
    const closing = web.running.close();
    await sleep(600); // past the delay, inside the body timeout
    finishBody();
    assert.deepEqual(await inFlight, { status: 200, connection: 'close' });
    await closing;
  } finally {
    await web.stop();
  }
});

test('shutdown ends at its timeout even with connections that never finished their TLS handshake', async () => {
  // Handshake timeout far longer than the shutdown timeout: only shutdown can end these sockets.
  const web = await startTestWebhook({ config: { shutdownDelayMs: 200, shutdownTimeoutMs: 800, logLevel: 'warn' }, limits: { handshakeTimeoutMs: 120_000 } });
  const halfOpen: Socket[] = [];
  try {
    for (let i = 0; i < 5; i++) {
      halfOpen.push(await new Promise<Socket>((resolve, reject) => {
        const socket = connectTcp({ host: '127.0.0.1', port: web.running.port }, () => resolve(socket));
        socket.on('error', reject);
      }));
    }
    // Half a ClientHello on one of them: a handshake in progress, not just a silent socket.
    halfOpen[0]?.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01]));
    await sleep(100);
    assert.equal(web.running.connections(), 5);
    const closedSockets = Promise.all(halfOpen.map((s) => new Promise<void>((resolve) => {
      s.on('error', () => undefined);
      s.once('close', () => resolve());
    })));
    const outcome = await Promise.race([web.running.close().then(() => 'closed'), sleep(10_000).then(() => 'still waiting after 10 s')]);
    assert.equal(outcome, 'closed');
    await closedSockets;
    assert.equal(web.running.connections(), 0);
  } finally {
    for (const s of halfOpen) s.destroy();
    await web.stop();
  }
});
