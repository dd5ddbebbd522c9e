/**
 * The agent's /metrics with --metrics-secure (the default) over real HTTPS: a self-signed
 * certificate made at start, every scrape's token reviewed by the API stand-in
 * (test/apiserver/reviews.ts); the probes on their own plain port, unguarded.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { MemoryConntrack, MemoryIpvs } from 'netlink-native/memory';
import { AgentRig, memoryNetlinkWithEvents } from '../../test/agent/agent-rig.js';
import { scrape } from '../../test/scrape.js';

const rig = new AgentRig('cd-secure-metrics');
before(async () => {
  await rig.start();
  rig.server.reviews.allow('prometheus-token', 'system:serviceaccount:monitoring:prometheus');
  rig.server.reviews.deny('nosy-token', 'system:serviceaccount:shop:web');
});
after(() => rig.stop());

function plainGet(port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

test('secure metrics: 200 with the metrics for an allowed token, 401 without or unknown, 403 denied, 503 while the API fails, still serving', async () => {
  const agent = await rig.makeAgent('node-s', memoryNetlinkWithEvents(new MemoryConntrack(), new MemoryIpvs()), { config: { metricsSecure: true } });
  try {
    const { metricsPort, probesPort } = await agent.start();
    assert.notEqual(metricsPort, probesPort);

    const allowed = await scrape(metricsPort, '/metrics', { token: 'prometheus-token' });
    assert.equal(allowed.status, 200);
    assert.match(allowed.body, /conndrain_ipvs_available 1/);
    assert.deepEqual(allowed.certificate.subjectaltname, 'DNS:node-s, DNS:localhost', 'self-signed, for the node name');

    const none = await scrape(metricsPort, '/metrics');
    assert.equal(none.status, 401);
    assert.match(String(none.headers['www-authenticate']), /^Bearer/);
    assert.doesNotMatch(none.body, /conndrain_/);
    assert.equal((await scrape(metricsPort, '/metrics', { token: 'made-up' })).status, 401);
    const denied = await scrape(metricsPort, '/metrics', { token: 'nosy-token' });
    assert.equal(denied.status, 403);
    assert.doesNotMatch(denied.body, /conndrain_/);

    rig.server.reviews.failWith(500);
    try {
      const failing = await scrape(metricsPort, '/metrics', { token: 'another-token' });
      assert.equal(failing.status, 503);
      assert.doesNotMatch(failing.body, /conndrain_/);
    } finally {
      rig.server.reviews.failWith(undefined);
    }
    assert.equal((await scrape(metricsPort, '/metrics', { token: 'prometheus-token' })).status, 200, 'still serving');

    // Plain HTTP on the metrics port gets nothing; the probes are plain HTTP and unguarded.
    await assert.rejects(plainGet(metricsPort, '/metrics'));
    assert.equal(await plainGet(probesPort, '/healthz'), 200);
    assert.equal(await plainGet(probesPort, '/metrics'), 404, 'no metrics on the probes port');
  } finally {
    await agent.stop();
  }
});

test('secure metrics with an API server that cannot be reached: 503 on every scrape, the agent keeps serving', async () => {
  const agent = await rig.makeAgent('node-u', memoryNetlinkWithEvents(new MemoryConntrack(), new MemoryIpvs()), { config: { metricsSecure: true } });
  try {
    const { metricsPort, probesPort } = await agent.start();
    // The stand-in goes away (connection refused): a token not cached yet cannot be reviewed.
    await rig.server.close();
    const refused = await scrape(metricsPort, '/metrics', { token: 'fresh-token' });
    assert.equal(refused.status, 503);
    assert.equal(await plainGet(probesPort, '/healthz'), 200, 'the process is still serving');
  } finally {
    await agent.stop();
  }
});
