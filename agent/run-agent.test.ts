/**
 * runAgent(config, deps), the agent's component entry: it starts the agent, hands over and
 * stops on the shutdown requests, and turns every failure to start into an AgentStartError
 * whose reason the CLI maps to an exit code (kubeconfig, netlink, port in use).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { pino } from 'pino';
import { MemoryConntrack, MemoryIpvs } from 'netlink-native/memory';
import { loadKubeConnection } from '../kube/load.js';
import { AgentRig, memoryNetlink } from '../test/agent/agent-rig.js';
import { AgentStartError, runAgent, type AgentNetlink, type RunAgentDeps } from './run-agent.js';

const rig = new AgentRig('cd-run-agent');
before(() => rig.start());
after(() => rig.stop());

const logger = pino({ level: 'silent' });

/** Stand-in netlink that records whether it was closed. */
function standIn(): AgentNetlink & { closed: () => boolean } {
  let closed = false;
  return { netlink: { ...memoryNetlink(new MemoryConntrack(), new MemoryIpvs()), close: () => void (closed = true) }, closed: () => closed };
}

function deps(netlink: AgentNetlink, first: Promise<string>): RunAgentDeps {
  return { logger, shutdown: { first, second: () => new Promise<void>(() => undefined) }, loadKube: () => loadKubeConnection({ kubeconfig: rig.kubeconfig }), loadNetlink: () => Promise.resolve(netlink) };
}

test('runAgent runs until the shutdown request, hands over, stops and closes netlink', async () => {
  const nl = standIn();
  let request: (signal: string) => void = () => undefined;
  const first = new Promise<string>((resolve) => (request = resolve));
  const running = runAgent(rig.config('node-run', { flags: { conntrackEvents: 'false', ipvsHold: 'false' } }), deps(nl, first));
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(nl.closed(), false, 'running until asked to stop');
  request('SIGTERM');
  await running;
  assert.equal(nl.closed(), true);
});

test('a kubeconfig that cannot be loaded is AgentStartError kubeconfig', async () => {
  const config = rig.config('node-kc', { config: { kubeconfig: rig.path('missing-kubeconfig') } });
  await assert.rejects(runAgent(config, { logger, shutdown: { first: new Promise(() => undefined), second: () => Promise.resolve() } }), (error: unknown) => {
    assert.ok(error instanceof AgentStartError);
    assert.equal(error.reason, 'kubeconfig');
    assert.match(error.message, /cannot load the kubeconfig .*missing-kubeconfig/);
    return true;
  });
});

test('netlink that cannot be opened is AgentStartError netlink', async () => {
  const d = deps(standIn(), new Promise(() => undefined));
  d.loadNetlink = () => Promise.reject(new Error('EPERM: operation not permitted'));
  await assert.rejects(runAgent(rig.config('node-nl'), d), (error: unknown) => error instanceof AgentStartError && error.reason === 'netlink' && /NET_ADMIN/.test(error.message));
});

test('a taken metrics port is AgentStartError port-in-use, names the part, and closes netlink', async () => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const address = taken.address();
  assert.ok(typeof address === 'object' && address !== null);
  const nl = standIn();
  const config = rig.config('node-port', { flags: { conntrackEvents: 'false', ipvsHold: 'false' }, config: { metricsPort: address.port } });
  await assert.rejects(runAgent(config, deps(nl, new Promise(() => undefined))), (error: unknown) => {
    assert.ok(error instanceof AgentStartError);
    assert.equal(error.reason, 'port-in-use');
    assert.equal(error.runnable, 'health');
    assert.match(error.message, /cannot start: .*EADDRINUSE/);
    return true;
  });
  assert.equal(nl.closed(), true);
  await new Promise<void>((resolve) => taken.close(() => resolve()));
});

test('a taken drain port fails the drain part after conntrack and ipvs started: those stop again and the state file is not written', async () => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const address = taken.address();
  assert.ok(typeof address === 'object' && address !== null);
  const nl = standIn();
  const stateFile = rig.path('drain-port.json');
  const config = rig.config('node-drainport', { stateFile, flags: { conntrackEvents: 'false' }, config: { drainPort: address.port, drainAddress: '127.0.0.1' } });
  await assert.rejects(runAgent(config, deps(nl, new Promise(() => undefined))), (error: unknown) => error instanceof AgentStartError && error.reason === 'port-in-use' && error.runnable === 'drain');
  assert.equal(nl.closed(), true);
  assert.equal(existsSync(stateFile), false, 'a process that did not finish starting writes no state file');
  await new Promise<void>((resolve) => taken.close(() => resolve()));
});
