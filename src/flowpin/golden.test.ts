/**
 * Golden tests of what flow pinning generates: the twin plan and the nftables JSON batch for
 * each scenario in fixtures/scenarios.ts must equal the reviewed files in fixtures/.
 * UPDATE_GOLDEN=1 rewrites them (review the diff before committing).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
// eslint-disable-next-line @typescript-eslint/no-restricted-imports -- the test (not src/ code) reads and rewrites its golden files
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { planFlowpin } from './twin-plan.js';
import { buildRuleset } from './nft-ruleset.js';
import { SCENARIOS } from './fixtures/scenarios.js';

const dir = join(new URL('.', import.meta.url).pathname, 'fixtures');
const update = process.env.UPDATE_GOLDEN === '1';

function golden(name: string, actual: unknown): void {
  const path = join(dir, name);
  const text = `${JSON.stringify(actual, null, 2)}\n`;
  if (update || !existsSync(path)) {
    if (!update) assert.fail(`missing golden file ${path} (run with UPDATE_GOLDEN=1 and review)`);
    writeFileSync(path, text);
    return;
  }
  assert.deepEqual(JSON.parse(text), JSON.parse(readFileSync(path, 'utf8')), `${name} differs from the golden file`);
}

for (const [name, input] of Object.entries(SCENARIOS)) {
  test(`golden: ${name}`, () => {
    const plan = planFlowpin(input);
    golden(`${name}.plan.json`, plan);
    golden(`${name}.nft.json`, buildRuleset(plan.twins));
  });
}

test('a hold recorded by an agent before the one key text (`address/port`) plans the same twin as today\'s form (an upgrade keeps the pre-drain order)', () => {
  const input = SCENARIOS['proxy-deleted-the-held-server'];
  assert.ok(input !== undefined);
  const older = { ...input, held: input.held.map((h) => (h.serviceOrder === undefined ? h : { ...h, serviceOrder: h.serviceOrder.map((id) => id.replace(/:(\d+)$/, '/$1')) })) };
  assert.notDeepEqual(older.held, input.held);
  assert.deepEqual(planFlowpin(older), planFlowpin(input));
});
