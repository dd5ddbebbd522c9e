/** DER as X.690 writes it: lengths in both forms, INTEGER signs, OIDs, the two time forms. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bitString, boolean, objectIdentifier, sequence, smallInteger, time, tlv, unsignedInteger } from './der.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

test('lengths: short form below 128 bytes, then 0x81, 0x82 and 0x83 with the length in big-endian bytes', () => {
  assert.equal(hex(tlv(0x04, Buffer.alloc(0))), '0400');
  assert.equal(hex(tlv(0x04, Buffer.alloc(127))).slice(0, 4), '047f');
  assert.equal(hex(tlv(0x04, Buffer.alloc(128))).slice(0, 6), '048180');
  assert.equal(hex(tlv(0x04, Buffer.alloc(255))).slice(0, 6), '0481ff');
  assert.equal(hex(tlv(0x04, Buffer.alloc(256))).slice(0, 8), '04820100');
  assert.equal(hex(tlv(0x04, Buffer.alloc(70_000))).slice(0, 10), '0483011170');
  assert.equal(tlv(0x04, Buffer.alloc(300)).length, 304);
  assert.equal(hex(sequence(boolean(true), boolean(false))), '30060101ff010100');
});

test('unsigned INTEGERs: leading zeros dropped, a 0x00 put back before a high bit, zero as one byte', () => {
  assert.equal(hex(unsignedInteger(Buffer.from([0x01, 0x02]))), '02020102');
  assert.equal(hex(unsignedInteger(Buffer.from([0x00, 0x00, 0x7f]))), '02017f');
  assert.equal(hex(unsignedInteger(Buffer.from([0x80]))), '02020080');
  assert.equal(hex(unsignedInteger(Buffer.from([0x00, 0xff, 0x01]))), '020300ff01');
  assert.equal(hex(unsignedInteger(Buffer.from([0x00, 0x00]))), '020100');
  assert.equal(hex(smallInteger(2)), '020102');
  assert.throws(() => smallInteger(128), RangeError);
  assert.throws(() => smallInteger(-1), RangeError);
});

test('object identifiers: the first two arcs in one byte, larger arcs in base 128 with continuation bits', () => {
  assert.equal(hex(objectIdentifier('1.2.840.10045.4.3.2')), '06082a8648ce3d040302');
  assert.equal(hex(objectIdentifier('2.5.29.17')), '0603551d11');
  assert.equal(hex(objectIdentifier('1.3.6.1.5.5.7.3.1')), '06082b06010505070301');
  assert.equal(hex(objectIdentifier('2.999.1')), '0603883701');
  for (const bad of ['', '1', '1.', '3.1', '1.40', '1.2.x', '1.02', '1.2.-3']) assert.throws(() => objectIdentifier(bad), RangeError, bad);
});

test('times: UTCTime for 1950-2049, GeneralizedTime outside, to the second, in UTC', () => {
  const text = (b: Buffer): string => `${b[0]?.toString(16) ?? ''}:${b.subarray(2).toString('ascii')}`;
  assert.equal(text(time(new Date('2026-12-07T21:50:09.999Z'))), '17:261207215009Z');
  assert.equal(text(time(new Date('2049-12-31T23:59:59Z'))), '17:491231235959Z');
  assert.equal(text(time(new Date('2050-01-01T00:00:00Z'))), '18:20500101000000Z');
  assert.equal(text(time(new Date('1949-12-31T23:59:59Z'))), '18:19491231235959Z');
  assert.equal(text(time(new Date('1950-01-01T00:00:00Z'))), '17:500101000000Z');
  assert.throws(() => time(new Date(Number.NaN)), RangeError);
});

test('a BIT STRING of whole bytes says 0 unused bits', () => {
  assert.equal(hex(bitString(Buffer.from([0xab, 0xcd]))), '030300abcd');
});
