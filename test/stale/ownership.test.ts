import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeAddress, OwnershipIndex } from '../../src/stale/index.js';
import { slice } from './fixtures.js';

describe('normalizeAddress', () => {
  it('puts IPv6 in RFC 5952 form and leaves IPv4 alone', () => {
    assert.equal(normalizeAddress('FD00:0:0:0:0:0:0:0A'), 'fd00::a');
    assert.equal(normalizeAddress('fd00::0a'), 'fd00::a');
    assert.equal(normalizeAddress('2001:db8:0:0:1:0:0:1'), '2001:db8::1:0:0:1');
    assert.equal(normalizeAddress('::ffff:10.0.0.1'), '::ffff:a00:1');
    assert.equal(normalizeAddress(' 10.1.2.3 '), '10.1.2.3');
    assert.equal(normalizeAddress('not-an-ip::x::'), 'not-an-ip::x::');
  });
});

describe('OwnershipIndex', () => {
  it('owns ready, serving-only and terminating endpoints alike, by protocol, address and port', () => {
    const index = new OwnershipIndex();
    index.upsert(slice('dns-a', 'kube-dns', [{ port: 53, protocol: 'UDP' }, { port: 53 }], [
      { ip: '10.244.1.5' },
      { ip: '10.244.1.6', ready: false, serving: true, terminating: true },
      { ip: '10.244.1.7', ready: false, serving: false, terminating: true },
    ], 'kube-system'));
    for (const ip of ['10.244.1.5', '10.244.1.6', '10.244.1.7']) {
      assert.equal(index.owns('udp', ip, 53), true, ip);
      assert.equal(index.owns('tcp', ip, 53), true, ip);
    }
    assert.equal(index.owns('udp', '10.244.1.5', 5353), false, 'other port');
    assert.equal(index.owns('sctp', '10.244.1.5', 53), false, 'other protocol');
    assert.equal(index.owns('udp', '10.244.1.8', 53), false, 'other address');
    assert.equal(index.ownsAddress('10.244.1.7'), true);
    assert.equal(index.serviceOf('udp', '10.244.1.7', 53), 'kube-system/kube-dns');
  });

  it('treats a port without number as every port, and a slice without ports as every port and protocol', () => {
    const index = new OwnershipIndex();
    index.upsert(slice('a', 'any', [{ port: null, protocol: 'UDP' }], [{ ip: '10.0.1.1' }]));
    index.upsert(slice('b', 'noports', [], [{ ip: '10.0.1.2' }]));
    assert.equal(index.owns('udp', '10.0.1.1', 9999), true);
    assert.equal(index.owns('tcp', '10.0.1.1', 9999), false);
    assert.equal(index.owns('sctp', '10.0.1.2', 1), true);
  });

  it('matches IPv6 whatever its spelling', () => {
    const index = new OwnershipIndex();
    index.upsert(slice('v6', 'web', [{ port: 80 }], [{ ip: 'FD00:0::0A' }]));
    assert.equal(index.owns('tcp', 'fd00::a', 80), true);
  });

  it('counts removals on update, delete and relist, and keeps shared targets owned by reference count', () => {
    const index = new OwnershipIndex();
    index.upsert(slice('web-1', 'web', [{ port: 80 }], [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }]));
    index.upsert(slice('other', 'web2', [{ port: 80 }], [{ ip: '10.0.0.2' }]));
    assert.deepEqual(index.upsert(slice('web-1', 'web', [{ port: 80 }], [{ ip: '10.0.0.1' }])), { removed: 1 });
    assert.equal(index.owns('tcp', '10.0.0.2', 80), true, 'still owned by the other slice');
    assert.deepEqual(index.remove('default/other'), { removed: 1 });
    assert.equal(index.owns('tcp', '10.0.0.2', 80), false);
    assert.equal(index.ownsAddress('10.0.0.2'), false);
    assert.equal(index.serviceOf('tcp', '10.0.0.2', 80), 'default/web2', 'last owner is remembered for logs');
    assert.deepEqual(index.replaceAll([slice('x', 'x', [{ port: 81 }], [{ ip: '10.0.0.1' }])]), { removed: 1 });
    assert.equal(index.owns('tcp', '10.0.0.1', 80), false);
    assert.equal(index.owns('tcp', '10.0.0.1', 81), true);
    assert.equal(index.sliceCount, 1);
    assert.equal(index.targetCount, 1);
    index.remove('default/x');
    assert.deepEqual([index.targetCount, index.ownsAddress('10.0.0.1'), index.owns('tcp', '10.0.0.1', 81)], [0, false, false]);
  });

  it('keeps a target owned while any slice still lists it, and counts distinct targets', () => {
    const index = new OwnershipIndex();
    index.upsert(slice('a', 's', [{ port: 53, protocol: 'UDP' }, { port: null, protocol: 'TCP' }], [{ ip: '10.0.2.1' }]));
    index.upsert(slice('b', 's', [{ port: 53, protocol: 'UDP' }], [{ ip: '10.0.2.1' }]));
    assert.equal(index.targetCount, 2);
    index.remove('default/a');
    assert.deepEqual([index.owns('udp', '10.0.2.1', 53), index.owns('tcp', '10.0.2.1', 1), index.targetCount], [true, false, 1]);
  });
});
