import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildCpio } from './cpio.js';
import { findGuestKernel } from './kernel.js';
import { resolveModules } from './initramfs.js';

test('cpio: newc headers, 4-byte alignment and the trailer', () => {
  const archive = buildCpio([
    { kind: 'dir', path: 'bin' },
    { kind: 'file', path: 'bin/hello', data: Buffer.from('hi\n'), mode: 0o755 },
    { kind: 'symlink', path: 'bin/sh', target: 'busybox' },
    { kind: 'char', path: 'dev/console', major: 5, minor: 1 },
  ]);
  assert.equal(archive.length % 4, 0);
  const text = archive.toString('latin1');
  assert.ok(text.startsWith('070701'));
  const fileHeader = text.indexOf('bin/hello\0');
  const header = text.slice(fileHeader - 110, fileHeader);
  assert.equal(header.slice(0, 6), '070701');
  assert.equal(Number.parseInt(header.slice(14, 22), 16), 0o100755, 'mode');
  assert.equal(Number.parseInt(header.slice(54, 62), 16), 3, 'file size');
  assert.equal(Number.parseInt(header.slice(94, 102), 16), 'bin/hello\0'.length, 'name size');
  const console = text.indexOf('dev/console\0');
  const consoleHeader = text.slice(console - 110, console);
  assert.equal(Number.parseInt(consoleHeader.slice(14, 22), 16), 0o020600);
  assert.equal(Number.parseInt(consoleHeader.slice(78, 86), 16), 5, 'rdev major');
  assert.ok(text.includes('TRAILER!!!\0'));
});

const kernel = findGuestKernel();
test('modules resolve dependencies first', { skip: kernel === undefined ? 'no Debian kernel in /boot' : false }, () => {
  if (kernel === undefined) return;
  const ordered = resolveModules(kernel.modulesDir, ['9p', 'ip_vs_mh']).map((path) => path.split('/').at(-1));
  const index = (name: string): number => ordered.indexOf(name);
  assert.ok(index('9pnet.ko') >= 0 && index('9pnet.ko') < index('9p.ko'), ordered.join(','));
  assert.ok(index('ip_vs.ko') >= 0 && index('ip_vs.ko') < index('ip_vs_mh.ko'), ordered.join(','));
  assert.throws(() => resolveModules(kernel.modulesDir, ['no_such_module_x']), /neither/);
});
