/** listenReusePort: two servers in one group on the same port, both answer; one closes, the other goes on. Loopback only. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { listenReusePort, NetlinkError } from '../lib/index.js';

function serve(name: string, fd: number): Promise<Server> {
  const server = createServer((_req, res) => res.end(name));
  return new Promise((resolve) => server.listen({ fd }, () => resolve(server)));
}

function portOf(server: Server): number {
  const a = server.address();
  assert.ok(typeof a === 'object' && a !== null);
  return a.port;
}

async function askMany(port: number, host: string, n: number): Promise<Map<string, number>> {
  const seen = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    const text = await (await fetch(`http://${host.includes(':') ? `[${host}]` : host}:${port}/`, { headers: { connection: 'close' } })).text();
    seen.set(text, (seen.get(text) ?? 0) + 1);
  }
  return seen;
}

for (const host of ['127.0.0.1', '::1']) {
  test(`listenReusePort on ${host}: a second server binds the same port, both are served; after one closes every call reaches the other`, async () => {
    const one = await serve('one', listenReusePort(host, 0));
    const port = portOf(one);
    const two = await serve('two', listenReusePort(host, port));
    assert.equal(portOf(two), port);
    const both = await askMany(port, host, 40);
    assert.deepEqual([...both.keys()].sort(), ['one', 'two'], 'the kernel spreads connections over the group');
    await new Promise<void>((resolve) => one.close(() => resolve()));
    const after = await askMany(port, host, 10);
    assert.deepEqual([...after.entries()], [['two', 10]]);
    await new Promise<void>((resolve) => two.close(() => resolve()));
  });
}

test('listenReusePort: EADDRINUSE next to a listener without SO_REUSEPORT; a clear error for a bad address or port', async () => {
  const plain = createNetServer();
  await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
  const address = plain.address();
  assert.ok(typeof address === 'object' && address !== null);
  assert.throws(() => listenReusePort('127.0.0.1', address.port), (e: unknown) => e instanceof NetlinkError && e.code === 'EADDRINUSE' && e.op === 'listenReusePort');
  await new Promise<void>((resolve) => plain.close(() => resolve()));
  assert.throws(() => listenReusePort('localhost', 0), (e: unknown) => e instanceof NetlinkError && e.code === 'EINVAL' && /not a numeric IPv4 or IPv6 address/.test(e.message));
  assert.throws(() => listenReusePort('127.0.0.1', 70000), (e: unknown) => e instanceof NetlinkError && e.code === 'EINVAL');
});
