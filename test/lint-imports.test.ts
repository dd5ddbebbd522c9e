/**
 * The import rules of eslint.config.js, run on small sources placed in each layer: production
 * code never imports test/, lab/ or bench/; components never import cli/ (no exception); a cli/
 * feature folder never imports a command module; kube/ imports no component and no native
 * code; the agent does not import the webhook; native/lib imports nothing outside native/;
 * log/ and time/ import nothing of the app; src/ takes nothing from the components, does no
 * I/O, builds no logger (neither pino nor log/) and takes only types (and IPS_DST_NAT) from
 * `netlink-native/types` and the pure key functions of `netlink-native/ipvs-keys`; the lab
 * never imports cli/ (its tests neither); other tests may import anything; shipped code takes
 * node:http's values from kube/node-http.ts (types from node:http). And each file is
 * matched by one import-rule block only (a later block would silently replace an earlier
 * one's list).
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

/** The import-rule blocks of the project's config, each on its own. */
const importBlocks = config.filter((block) => block.rules?.[RULE] !== undefined);

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
    for (const file of ['cli/x.ts', 'kube/x.ts', 'agent/x.ts', 'webhook/x.ts', 'native/lib/x.ts', 'src/x.ts', 'log/x.ts', 'time/x.ts']) {
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

  it('keep one direction between cli/ and lab/: the CLI loads the lab, the lab never imports cli/', async () => {
    const source = [
      "import { buildProgram } from '../cli/program.js';",
      "import type { LabEntry } from '../cli/commands/lab.js';",
      "import { runDemo } from './demo.js';",
      "import { managedPod } from '../test/apiserver/pods.js';",
    ].join('\n');
    assert.deepEqual(await rejectedLines('lab/x.ts', `${source}\n`), [1, 2]);
    assert.deepEqual(await rejectedLines('lab/scenarios/x.ts', `${source.replaceAll("'../", "'../../")}\n`), [1, 2]);
    assert.deepEqual(await rejectedLines('lab/x.test.ts', `${source}\n`), [1, 2], 'the lab\'s tests too');
    assert.deepEqual(await rejectedLines('cli/commands/lab.test.ts', "import { lab } from '../../lab/entry.js';\n"), [], 'the CLI\'s test of the seam reaches the lab');
  });

  it('keep cli/\'s feature folders under the commands that wire them', async () => {
    const source = [
      "import { defineStaleCommand } from '../commands/stale.js';",
      "import { loadInventory } from '../stale/inventory.js';",
      "import { CliExit } from '../exit.js';",
      "import { kubeRequest } from '../../kube/request.js';",
      "import { a } from '../../test/x.js';",
    ].join('\n');
    for (const file of ['cli/doctor/x.ts', 'cli/stale/x.ts', 'cli/check/x.ts', 'cli/manifest/x.ts', 'cli/webhook/x.ts']) {
      assert.deepEqual(await rejectedLines(file, `${source}\n`), [1, 5], file);
    }
    assert.deepEqual(await rejectedLines('cli/commands/doctor.ts', "import type { DoctorFlags } from '../doctor/run.js';\n"), [], 'a command wires its feature');
    assert.deepEqual(await rejectedLines('cli/doctor/x.test.ts', "import { defineDoctorCommand } from '../commands/doctor.js';\n"), [], 'tests may reach anything');
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
    assert.deepEqual(await rejectedLines('agent/stale/x.ts', "import { systemClock } from '../../time/clock.js';\n"), []);
    assert.deepEqual(await rejectedLines('cli/x.ts', "import { loadKubeConnection } from '../kube/load.js';\n"), []);
  });

  it('keep src/ pure: types and IPS_DST_NAT only from netlink-native/types, the key functions of netlink-native/ipvs-keys, nothing from the components or cli/', async () => {
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
      "import { formatServiceKey, parseServiceKey } from 'netlink-native/ipvs-keys';",
      "import { formatServiceKey as f } from 'netlink-native';",
      "import { openMemoryIpvs } from 'netlink-native/memory';",
    ].join('\n');
    assert.deepEqual(await rejectedLines('src/x.ts', `${source}\n`), [2, 3, 4, 5, 6, 7, 8, 11, 12, 14, 15]);
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
    assert.deepEqual(await rejectedLines('agent/conntrack/x.ts', "import { StaleJanitor } from '../stale/janitor.js';\nimport { StaleJanitor as J } from '../stale/index.js';\nimport type { ScanReport } from '../stale/janitor.js';\n"), [1], 'the janitor (agent/stale/) is a capability too');
    assert.deepEqual(await rejectedLines('agent/agent.ts', "import { PodsRunnable } from './pods/pods-runnable.js';\n"), [], 'agent.ts composes the capabilities');
    assert.deepEqual(await rejectedLines('agent/drain/x.test.ts', "import { PodCache } from '../pods/pod-cache.js';\n"), [], 'tests may reach any file');
  });

  it('keep native/lib (netlink-native) to itself: nothing from outside native/', async () => {
    const source = [
      "import { DRAIN_API_PREFIX } from '../../src/contract.js';",
      "import { kubeRequest } from '../../kube/request.js';",
      "import { Agent } from '../../agent/agent.js';",
      "import { startWebhookServer } from '../../webhook/server.js';",
      "import { CliExit } from '../../cli/exit.js';",
      "import type { PodCache } from '../../agent/pods/pod-cache.js';",
      "import type { IpvsApi } from './types.js';",
      "import { readFileSync } from 'node:fs';",
    ].join('\n');
    assert.deepEqual(await rejectedLines('native/lib/x.ts', `${source}\n`), [1, 2, 3, 4, 5, 6]);
  });

  it('keep the agent beside the webhook: no import of webhook/ from any agent folder (tests excepted)', async () => {
    const source = "import { startWebhookServer } from '../webhook/server.js';\nimport { kubeRequest } from '../kube/request.js';\n";
    assert.deepEqual(await rejectedLines('agent/x.ts', source), [1]);
    assert.deepEqual(await rejectedLines('agent/drain/x.ts', source.replaceAll("'../", "'../../")), [1]);
    assert.deepEqual(await rejectedLines('agent/ipvs/flowpin/x.ts', "import type { Logger } from '../../../webhook/x.js';\n"), [1]);
    assert.deepEqual(await rejectedLines('agent/x.test.ts', source), []);
  });

  it('keep src/ free of I/O modules, bare or node:, of the logger, and of node:crypto but X509Certificate', async () => {
    const io = ['fs', 'fs/promises', 'net', 'http', 'https', 'child_process', 'os', 'tls', 'dgram', 'worker_threads'];
    const source = [...io.map((name) => `import * as a from '${name}';`), ...io.map((name) => `import * as b from 'node:${name}';`), "import { pino } from 'pino';", "import { createHash } from 'node:crypto';", "import { randomUUID } from 'crypto';", "import { X509Certificate } from 'node:crypto';", "import { X509Certificate as C } from 'crypto';", "import { parseDuration } from './duration.js';"];
    const rejected = source.map((_, index) => index + 1).slice(0, io.length * 2 + 3);
    assert.deepEqual(await rejectedLines('src/x.ts', `${source.join('\n')}\n`), rejected);
    assert.deepEqual(await rejectedLines('src/check/x.ts', "import { pino } from 'pino';\nimport { hostname } from 'node:os';\n"), [1, 2]);
    assert.deepEqual(await rejectedLines('src/x.test.ts', "import { hostname } from 'node:os';\nimport { pino } from 'pino';\n"), [1, 2], 'src/ tests keep the purity rules');
    assert.deepEqual(await rejectedLines('src/x.ts', "import { createLogger } from '../log/logger.js';\nimport type { Logger } from '../log/logger.js';\n"), [1, 2], 'nor the logger factory in log/');
    assert.deepEqual(await rejectedLines('src/logging.ts', "import { pino } from 'pino';\n"), [1], 'no file of src/ is excepted');
  });

  it('keep log/ and time/ under every room: they import nothing of the app', async () => {
    const source = [
      "import { pino } from 'pino';",
      "import { setTimeout } from 'node:timers';",
      "import { DRAIN_API_PREFIX } from '../src/contract.js';",
      "import { kubeRequest } from '../kube/request.js';",
      "import { CliExit } from '../cli/exit.js';",
      "import { systemClock } from '../time/clock.js';",
      "import { a } from '../test/x.js';",
      "import { b } from './batch.js';",
    ].join('\n');
    assert.deepEqual(await rejectedLines('log/x.ts', `${source}\n`), [3, 4, 5, 6, 7]);
    assert.deepEqual(await rejectedLines('time/x.ts', `${source}\n`), [3, 4, 5, 6, 7]);
    for (const file of ['kube/x.ts', 'agent/x.ts', 'webhook/x.ts', 'cli/x.ts']) {
      assert.deepEqual(await rejectedLines(file, "import { createLogger } from '../log/logger.js';\nimport { systemClock } from '../time/clock.js';\n"), [], file);
    }
  });

  it("take node:http's values through kube/node-http.ts in shipped code (an ESM import loads undici on Node 22+); types and tests are free", async () => {
    const source = "import type { Server } from 'node:http';\nimport { createServer } from 'node:http';\nimport { request } from 'http';\nimport { createServer as s2 } from 'node:https';\n";
    for (const file of ['agent/x.ts', 'agent/pods/x.ts', 'kube/x.ts', 'webhook/x.ts', 'cli/x.ts', 'cli/check/x.ts', 'log/x.ts']) {
      assert.deepEqual(await rejectedLines(file, source), [2, 3], file);
    }
    assert.deepEqual(await rejectedLines('agent/x.test.ts', source), []);
    assert.deepEqual(await rejectedLines('bench/x.ts', source), []);
  });

  it('give each file one import-rule block: a second would silently replace the first one\'s list', async () => {
    const files = [
      'webhook/x.ts', 'webhook/http/x.test.ts', 'kube/x.ts', 'kube/x.test.ts', 'agent/x.ts', 'agent/agent.ts', 'agent/drain/x.ts', 'agent/ipvs/flowpin/x.ts',
      'agent/drain/x.test.ts', 'agent/stale/x.ts', 'native/lib/x.ts', 'cli/x.ts', 'cli/commands/x.ts', 'cli/stale/x.ts', 'cli/doctor/x.test.ts', 'lab/x.ts', 'lab/x.test.ts', 'src/x.ts', 'src/check/x.ts', 'src/x.test.ts', 'log/x.ts', 'time/x.ts', 'time/x.test.ts',
    ];
    const cwd = new URL('..', import.meta.url).pathname;
    const alone = importBlocks.map((block) => new ESLint({ cwd, overrideConfigFile: true, overrideConfig: [importRules[0] as Linter.Config, block], ignore: false }));
    for (const file of files) {
      const matching: number[] = [];
      for (const [index, linter] of alone.entries()) {
        const computed = (await linter.calculateConfigForFile(file)) as Linter.Config | undefined;
        if (computed?.rules?.[RULE] !== undefined) matching.push(index);
      }
      // A production file has its layer's one block; a test outside src/, webhook/ and lab/ has none (tests may import anything).
      const expected = file.endsWith('.test.ts') && !/^(src|webhook|lab)\//.test(file) ? 0 : 1;
      assert.equal(matching.length, expected, `${file}: matched by import-rule blocks [${matching.join(', ')}]`);
    }
  });
});
