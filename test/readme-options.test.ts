/**
 * The configuration tables (docs/configuration.md) are the option specs (src/config/), row for row: a flag,
 * default or description changed in the code without the README fails here.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { AGENT_OPTIONS } from '../src/config/agent.js';
import type { OptionSpec } from '../src/config/options.js';
import { WEBHOOK_OPTIONS } from '../src/config/webhook.js';

const readme = readFileSync(new URL('../docs/configuration.md', import.meta.url), 'utf8');

/** The README row of one option: flag, environment variable, default, description. */
function rowOf(spec: OptionSpec): string {
  const fallback = 'default' in spec && spec.default !== undefined ? `\`${String(spec.default)}\`` : 'required' in spec && spec.required === true ? 'required' : '';
  return `| \`--${spec.flag}\` | \`${spec.env}\` | ${fallback} | ${spec.description.replaceAll('|', '\\|')} |`;
}

/** The table rows under a `### heading` of the README. */
function tableUnder(heading: string): string[] {
  const start = readme.indexOf(`\n### ${heading}\n`);
  assert.ok(start >= 0, `README has a "### ${heading}" section`);
  const end = readme.indexOf('\n#', start + heading.length + 6);
  return readme.slice(start, end < 0 ? undefined : end).split('\n').filter((line) => line.startsWith('| `--'));
}

describe('README configuration tables', () => {
  for (const [heading, options] of [['`conndrain webhook`', WEBHOOK_OPTIONS], ['`conndrain agent`', AGENT_OPTIONS]] as const) {
    it(`${heading}: one row per option, as the spec says`, () => {
      assert.deepEqual(tableUnder(heading), Object.values(options as Record<string, OptionSpec>).map(rowOf));
    });
  }
});
