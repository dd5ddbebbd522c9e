/** Upgrades (docs/upgrade.md): a state file written by a version whose format this agent does not know. */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadState, STATE_VERSION } from './state-file.js';

test('a state file of another format version is set aside, not misread, and the agent starts empty', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cdstate-'));
  try {
    const path = join(dir, 'state.json');
    const future = JSON.stringify({ version: STATE_VERSION + 1, writtenAt: 'later', pods: [], holds: [], sessions: [] });
    writeFileSync(path, future);
    const loaded = await loadState(path, 42);
    assert.equal(loaded.kind, 'corrupt');
    assert.match(loaded.kind === 'corrupt' ? loaded.reason : '', new RegExp(`not a version (1 or )?${STATE_VERSION} conndrain state file`));
    assert.equal(existsSync(path), false, 'moved out of the way of the new agent\'s writes');
    assert.equal(readFileSync(`${path}.corrupt-42`, 'utf8'), future, 'kept whole for a downgrade or a look');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
