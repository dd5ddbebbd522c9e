import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { pino } from 'pino';
import { enableAcceptMigration } from './accept-migration.js';

const log = pino({ level: 'silent' });

test('tcp_migrate_req: set where it is off, left where it is on, reported where it cannot be read', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cdmigrate-'));
  try {
    const path = join(dir, 'tcp_migrate_req');
    writeFileSync(path, '0\n');
    assert.equal(await enableAcceptMigration(log, path), 'enabled');
    assert.equal(readFileSync(path, 'utf8').trim(), '1');
    assert.equal(await enableAcceptMigration(log, path), 'on');
    assert.equal(await enableAcceptMigration(log, join(dir, 'missing')), 'unavailable');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
