/**
 * Flags, environment and ports of the rendered containers against what the binaries accept:
 * the option specs `conndrain webhook`/`conndrain agent` build their flags from
 * (src/config/webhook.ts WEBHOOK_OPTIONS, src/config/agent.ts AGENT_OPTIONS), and the very
 * config loaders the processes run at start.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AGENT_OPTIONS, loadAgentConfig } from '../../src/config/agent.js';
import type { OptionSpec } from '../../src/config/options.js';
import { loadWebhookConfig, WEBHOOK_OPTIONS } from '../../src/config/webhook.js';
import type { IContainer } from 'kubernetes-models/v1/Container';
import { intOption, parseArgs } from './cli-args.js';
import { AGENT_DAEMONSET, daemonSet, deployment, onlyContainer, resolvePort, WEBHOOK_DEPLOYMENT } from './objects.js';
import { KUBECTL_MISSING, renderAll } from './render.js';

/** The container's env as the process would see it; downward-API values get a stand-in. */
function envOf(container: IContainer): Record<string, string> {
  return Object.fromEntries((container.env ?? []).map((e) => [e.name, e.value ?? `<${e.valueFrom?.fieldRef?.fieldPath ?? 'ref'}>`]));
}

/** glibc's allocator settings the agent ships with (spelled as glibc reads them: a typo would be ignored silently). */
const GLIBC_ENV = ['MALLOC_ARENA_MAX', 'MALLOC_TRIM_THRESHOLD_'];

function checkEnvNames(container: IContainer, specs: Readonly<Record<string, OptionSpec>>): string[] {
  // NODE_OPTIONS is read by node itself (V8 heap sizing) and MALLOC_ARENA_MAX, MALLOC_TRIM_THRESHOLD_
  // by glibc's allocator, not by conndrain's config.
  const known = new Set([...Object.values(specs).map((s) => s.env), 'NODE_OPTIONS', ...GLIBC_ENV]);
  return (container.env ?? []).map((e) => e.name).filter((name) => !known.has(name));
}

describe('flags, env and ports match the binaries', { skip: KUBECTL_MISSING }, () => {
  for (const [path, objects] of renderAll()) {
    describe(path, () => {
      const webhook = onlyContainer(deployment(objects, WEBHOOK_DEPLOYMENT));
      const agent = onlyContainer(daemonSet(objects, AGENT_DAEMONSET));
      const webhookArgs = parseArgs(webhook.args ?? [], WEBHOOK_OPTIONS);
      const agentArgs = parseArgs(agent.args ?? [], AGENT_OPTIONS);

      it('runs the webhook and agent subcommands of the one CLI', () => {
        assert.equal(webhookArgs.command, 'webhook');
        assert.equal(agentArgs.command, 'agent');
        assert.equal(webhook.command, undefined, 'the image ENTRYPOINT is the conndrain CLI');
        // The image ENTRYPOINT (the conndrain CLI), with node's own flags only (agent.test.ts).
        assert.deepEqual([agent.command?.[0], agent.command?.[agent.command.length - 1]], ['node', '/app/bin/conndrain.mjs']);
        assert.ok((agent.command ?? []).slice(1, -1).every((flag) => flag.startsWith('--')), 'node flags only');
      });

      it('passes only flags the webhook accepts, with valid values', () => {
        assert.deepEqual(webhookArgs.problems, []);
        assert.deepEqual(checkEnvNames(webhook, WEBHOOK_OPTIONS), []);
        const loaded = loadWebhookConfig({ flags: Object.fromEntries(webhookArgs.flags), env: envOf(webhook) });
        assert.ok(loaded.ok, loaded.ok ? '' : loaded.error.join('; '));
      });

      it('passes only flags the agent accepts, with valid values, and every required input', () => {
        assert.deepEqual(agentArgs.problems, []);
        assert.deepEqual(checkEnvNames(agent, AGENT_OPTIONS), []);
        const loaded = loadAgentConfig({ flags: Object.fromEntries(agentArgs.flags), env: envOf(agent) });
        assert.ok(loaded.ok, loaded.ok ? '' : loaded.error.join('; '));
      });

      it('exposes the webhook on --port and probes that port', () => {
        const port = intOption(webhookArgs, WEBHOOK_OPTIONS.port);
        assert.deepEqual(webhook.ports?.map((p) => p.containerPort), [port]);
        assert.equal(resolvePort(webhook, webhook.livenessProbe?.httpGet?.port), port);
        assert.equal(resolvePort(webhook, webhook.readinessProbe?.httpGet?.port), port);
      });

      it('points hooks of kind agent at the port the agent drain API listens on', () => {
        assert.equal(intOption(webhookArgs, WEBHOOK_OPTIONS.agentPort), intOption(agentArgs, AGENT_OPTIONS.drainPort));
        assert.equal(agentArgs.flags.get('drain-address') ?? AGENT_OPTIONS.drainAddress.default, '127.0.0.1');
      });
    });
  }

  it('rejects a flag the binary does not have (the check can fail)', () => {
    const parsed = parseArgs(['webhook', '--prot=9443', '--default-hook=maybe', '--port', '70000'], WEBHOOK_OPTIONS);
    assert.equal(parsed.problems.length, 3);
    assert.match(parsed.problems[0] ?? '', /--prot is not an option/);
    assert.match(parsed.problems[1] ?? '', /--default-hook=maybe: not one of agent, sleep, exec/);
    assert.match(parsed.problems[2] ?? '', /--port=70000/);
  });

  it('reads --no-<bool> and --flag value forms like commander', () => {
    const parsed = parseArgs(['agent', '--no-ipvs-hold', '--drain-port', '9911'], AGENT_OPTIONS);
    assert.deepEqual(parsed.problems, []);
    assert.equal(parsed.flags.get('ipvs-hold'), 'false');
    assert.equal(intOption(parsed, AGENT_OPTIONS.drainPort), 9911);
  });
});
