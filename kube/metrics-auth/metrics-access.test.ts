/**
 * MetricsAccess against the API stand-in's TokenReview and SubjectAccessReview
 * (test/apiserver/reviews.ts): each decision, what is asked, the cache, and an API server
 * that fails or cannot be reached.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { FakeApiServer } from '../../test/apiserver/server.js';
import { LeanKubeConnection } from '../connection.js';
import { MetricsAccess, bearerTokenOf } from './metrics-access.js';

const api = new FakeApiServer();
before(async () => {
  await api.start();
  api.reviews.allow('prometheus-token', 'system:serviceaccount:monitoring:prometheus');
  api.reviews.deny('nosy-token', 'system:serviceaccount:shop:web');
});
after(() => api.close());

const logger = pino({ level: 'silent' });
function access(options: { now?: () => number; url?: string } = {}): MetricsAccess {
  const kube = new LeanKubeConnection(options.url ?? api.url, {}, { kind: 'token', token: 'agent-token' });
  return new MetricsAccess({ kube, logger, now: options.now, reviewTimeoutMs: 2000 });
}

describe('metrics access', () => {
  it('reads only a well-formed bearer header', () => {
    assert.equal(bearerTokenOf('Bearer abc'), 'abc');
    assert.equal(bearerTokenOf('bearer  abc '), 'abc');
    assert.equal(bearerTokenOf('Basic YTpi'), undefined);
    assert.equal(bearerTokenOf('Bearer a b'), undefined);
    assert.equal(bearerTokenOf(undefined), undefined);
    assert.equal(bearerTokenOf(`Bearer ${'x'.repeat(20_000)}`), undefined);
  });

  it('401 without a token or for one the API server does not know, 403 when denied, 200 when allowed', async () => {
    const a = access();
    assert.equal((await a.authorize(undefined)).status, 401);
    assert.equal((await a.authorize('Bearer unknown-token')).status, 401);
    const denied = await a.authorize('Bearer nosy-token');
    assert.equal(denied.status, 403);
    assert.match(denied.why, /system:serviceaccount:shop:web may not get \/metrics/);
    assert.deepEqual(await a.authorize('Bearer prometheus-token'), { status: 200, why: 'allowed' });
  });

  it('asks for get on the non-resource URL /metrics for the reviewed user and groups', async () => {
    api.reviews.accessSpecs.length = 0;
    await access().authorize('Bearer prometheus-token');
    assert.deepEqual(api.reviews.accessSpecs[0], {
      user: 'system:serviceaccount:monitoring:prometheus', uid: 'uid-system:serviceaccount:monitoring:prometheus',
      groups: ['system:authenticated'], nonResourceAttributes: { path: '/metrics', verb: 'get' },
    });
  });

  it('caches an allowed decision longer than a refusal, and shares one review between concurrent scrapes', async () => {
    let now = 1_000_000;
    const a = access({ now: () => now });
    const before = { ...api.reviews.counts };
    const all = await Promise.all(Array.from({ length: 5 }, () => a.authorize('Bearer prometheus-token')));
    assert.ok(all.every((d) => d.status === 200));
    assert.equal(api.reviews.counts.tokenReviews - before.tokenReviews, 1, 'one review for five concurrent scrapes');
    await a.authorize('Bearer nosy-token');
    assert.equal(api.reviews.counts.tokenReviews - before.tokenReviews, 2);
    now += 5_000;
    await a.authorize('Bearer prometheus-token');
    await a.authorize('Bearer nosy-token');
    assert.equal(api.reviews.counts.tokenReviews - before.tokenReviews, 3, 'the refusal expired, the grant did not');
    now += 10_000;
    await a.authorize('Bearer prometheus-token');
    assert.equal(api.reviews.counts.tokenReviews - before.tokenReviews, 4, 'the grant expired too');
  });

  it('503 while the API server fails the reviews, never cached: allowed again once it answers', async () => {
    const a = access();
    api.reviews.failWith(500);
    try {
      const failed = await a.authorize('Bearer prometheus-token');
      assert.equal(failed.status, 503);
    } finally {
      api.reviews.failWith(undefined);
    }
    assert.equal((await a.authorize('Bearer prometheus-token')).status, 200);
  });

  it('503 when the API server cannot be reached', async () => {
    const gone = new FakeApiServer();
    const url = await gone.start();
    await gone.close();
    const decision = await access({ url }).authorize('Bearer prometheus-token');
    assert.equal(decision.status, 503);
    assert.match(decision.why, /cannot check the token/);
  });
});
