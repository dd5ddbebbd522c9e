import assert from 'node:assert/strict';
import { test } from 'node:test';
import { makeAddressHolder } from './address-holder.js';

const holder = (local: Record<string, string>, slices: Record<string, string[]>, gone: string[]) => makeAddressHolder({
  liveLocal: (address, exceptUid) => (local[address] !== undefined && local[address] !== exceptUid ? `shop/${local[address]}` : undefined),
  endpointHolders: (address) => slices[address] ?? [],
  goneLocally: (uid) => gone.includes(uid),
  endpointKey: (uid) => (uid === 'uid-c' ? 'shop/c' : undefined),
});

test('a live local pod or a current endpoint other than the pod itself holds the address', () => {
  const h = holder({ '10.0.0.1': 'uid-b' }, { '10.0.0.2': ['uid-a', 'uid-c'] }, []);
  assert.equal(h.holderOf('10.0.0.1', 'uid-a'), 'shop/uid-b');
  assert.equal(h.holderOf('10.0.0.1', 'uid-b'), undefined);
  assert.equal(h.holderOf('10.0.0.2', 'uid-a'), 'shop/c', 'an endpoint by the name its slices give it');
  assert.equal(h.holderOf('10.0.0.2', 'uid-c'), 'uid-a', 'by its uid when they give none');
  assert.deepEqual([...h.heldLocally(['10.0.0.1', '10.0.0.2', '10.0.0.3'])], ['10.0.0.1', '10.0.0.2']);
});

test('a slice still listing a pod this node\'s pod watch saw go does not make it a holder', () => {
  const h = holder({}, { '10.0.0.1': ['uid-a'] }, ['uid-a']);
  assert.equal(h.holderOf('10.0.0.1', 'uid-b'), undefined);
  assert.deepEqual([...h.heldLocally(['10.0.0.1'])], []);
});
