/**
 * The import rules of eslint.config.js, run on small sources placed in each layer: production
 * code never imports test/, lab/ or bench/; components never import cli/ (no exception); kube/
 * imports no component and no native code; src/ takes nothing from the components and only
 * types from `netlink-native/types`; tests may import anything.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ESLint, type Linter } from 'eslint';
import tseslint from 'typescript-eslint';

const RULE = '@typescript-eslint/no-restricted-imports';
const { default: config } = (await import(new URL('../eslint.config.js', import.meta.url).href)) as { default: Linter.Config[] };

/** Only the import-rule blocks of the project's config, with the TypeScript parser and no type information. */
const importRules: Linter.Config[] = [
  { files: ['**/*.ts'], languageOptions: { parser: tseslint.parser }, plugins: { '@typescript-eslint': tseslint.plugin } },
  ...config.filter((block) => block.rules?.[RULE] !== undefined).map((block) => ({ ...block, rules: { [RULE]: block.rules?.[RULE] } })),
];

const eslint = new ESLint({ cwd: new URL('..', import.meta.url).pathname, overrideConfigFile: true, overrideConfig: importRules, ignore: false });

/** The lines of `source` that the import rules reject when it sits at `file`. */
async function rejectedLines(file: string, source: string): Promise<number[]> {
  const [result] = await eslint.lintText(source, { filePath: file });
  return (result?.messages ?? []).map((message) => {
    assert.equal(message.ruleId, RULE, message.message);
    return message.line;
  });
}

describe('the import rules (eslint.config.js)', () => {
  it('keep test/, lab/ and bench/ out of every production layer', async () => {
    const source = "import { a } from '../test/apiserver/pods.js';\nimport { b } from '../lab/entry.js';\nimport { c } from '../bench/run.js';\nimport { d } from './ok.js';\n";
    for (const file of ['cli/x.ts', 'kube/x.ts', 'agent/x.ts', 'webhook/x.ts', 'native/lib/x.ts', 'src/x.ts']) {
      const nested = file.split('/').length - 2;
      assert.deepEqual(await rejectedLines(file, source.replaceAll("'../", `'${'../'.repeat(nested + 1)}`)), [1, 2, 3], file);
    }
  });

  it('let tests import test helpers and the lab', async () => {
    assert.deepEqual(await rejectedLines('agent/x.test.ts', "import { a } from '../test/apiserver/pods.js';\nimport { b } from '../lab/entry.js';\n"), []);
  });

  it('keep components under cli/, with no exception', async () => {
    const source = "import { CliExit } from '../cli/exit.js';\n";
    assert.deepEqual(await rejectedLines('agent/x.ts', source), [1]);
    assert.deepEqual(await rejectedLines('kube/x.ts', source), [1]);
    assert.deepEqual(await rejectedLines('webhook/x.ts', source), [1]);
    assert.deepEqual(await rejectedLines('agent/commands.ts', source), [1], 'the former command modules are components too');
    assert.deepEqual(await rejectedLines('webhook/commands.ts', "import { addConfigOptions } from '../cli/options.js';\n"), [1]);
    assert.deepEqual(await rejectedLines('agent/ipvs/flowpin/cleanup-command.ts', "import { CliExit } from '../../cli/exit.js';\n"), [1]);
    assert.deepEqual(await rejectedLines('cli/commands/agent.ts', "import { CliExit } from '../exit.js';\nimport { runAgent } from '../../agent/run-agent.js';\n"), [], 'commands live in cli/commands/ and wire the components');
  });

  it('keep kube/ under the components: the agent and the CLI import it, it imports neither', async () => {
    const source = [
      "import { Agent } from '../agent/agent.js';",
      "import { startWebhookServer } from '../webhook/server.js';",
      "import { openNetlink } from 'netlink-native';",
      "import type { IpvsApi } from '../native/lib/types.js';",
      "import { readFileSync } from 'node:fs';",
      "import { Watch } from '@kubernetes/client-node/dist/watch.js';",
      "import { kubeRequest } from './request.js';",
    ].join('\n');
    assert.deepEqual(await rejectedLines('kube/x.ts', `${source}\n`), [1, 2, 3, 4]);
    assert.deepEqual(await rejectedLines('agent/x.ts', "import { kubeRequest } from '../kube/request.js';\n"), []);
    assert.deepEqual(await rejectedLines('agent/conntrack/janitor/x.ts', "import { systemClock } from '../../kube/clock.js';\n"), []);
    assert.deepEqual(await rejectedLines('cli/x.ts', "import { loadKubeConnection } from '../kube/load.js';\n"), []);
  });

  it('keep src/ pure: types and IPS_DST_NAT only from netlink-native/types, nothing from the components or cli/', async () => {
    const source = [
      "import type { ConntrackEntry } from 'netlink-native/types';",
      "import { NetlinkError } from 'netlink-native/types';",
      "import type { NativeNetlink } from 'netlink-native';",
      "import type { IpvsApi } from '../native/lib/types.js';",
      "import { registerAgentCommand } from '../cli/commands/agent.js';",
      "import { startWebhook } from '../webhook/server.js';",
      "import { CliExit } from '../cli/exit.js';",
      "import { readFileSync } from 'node:fs';",
      "import { parseDuration } from './duration.js';",
      "import { IPS_DST_NAT } from 'netlink-native/types';",
      "import { IPS_DST_NAT as DNAT, NetlinkError as E } from 'netlink-native/types';",
      "import { IPS_DST_NAT as X } from 'netlink-native';",
    ].join('\n');
    assert.deepEqual(await rejectedLines('src/x.ts', `${source}\n`), [2, 3, 4, 5, 6, 7, 8, 11, 12]);
  });

  it('let an agent capability take another one\'s values only through its index.ts (types from anywhere)', async () => {
    const source = [
      "import { eventPodOf } from '../pods/events.js';",
      "import { eventPodOf as e } from '../pods/index.js';",
      "import type { PodCache } from '../pods/pod-cache.js';",
      "import { type PodCache as C } from '../pods/pod-cache.js';",
      "import { listen } from '../runtime/health-server.js';",
      "import { DrainApi } from './drain-api.js';",
      "import { Topic } from '../topic.js';",
      "import { DRAIN_API_PREFIX } from '../../src/contract.js';",
    ].join('\n');
    assert.deepEqual(await rejectedLines('agent/drain/x.ts', `${source}\n`), [1, 5]);
    assert.deepEqual(await rejectedLines('agent/ipvs/flowpin/x.ts', "import { IpvsHold } from '../ipvs-hold.js';\nimport { PodsRunnable } from '../../pods/pods-runnable.js';\n"), [2]);
    assert.deepEqual(await rejectedLines('agent/agent.ts', "import { PodsRunnable } from './pods/pods-runnable.js';\n"), [], 'agent.ts composes the capabilities');
    assert.deepEqual(await rejectedLines('agent/drain/x.test.ts', "import { PodCache } from '../pods/pod-cache.js';\n"), [], 'tests may reach any file');
  });
});
