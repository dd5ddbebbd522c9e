import type { Command } from 'commander';
import { AGENT_OPTIONS, loadAgentCleanupConfig, loadAgentConfig, type AgentConfig } from '../../src/config/agent.js';
import { CliExit } from '../exit.js';
import { addConfigOptions } from '../options.js';

/**
 * `conndrain agent`: the node agent (DaemonSet, hostNetwork). Configuration comes only from
 * src/config/agent.ts (flags and env); every problem is printed at once. The netlink addon
 * and the agent are loaded lazily (the webhook image has neither). SIGTERM/SIGINT hand over:
 * the listeners close (a second agent on the same ports takes new calls), held drain calls are
 * answered as their drains end, then it exits with holds kept in place (docs/handover.md).
 */
export function defineAgentCommand(command: Command): void {
  addConfigOptions(command, AGENT_OPTIONS);
  command.action(async (flags: Record<string, unknown>) => {
    const cleanup = loadAgentCleanupConfig({ flags, env: process.env });
    if (cleanup.ok && cleanup.value.cleanup) {
      const { runFlowpinCleanup } = await import('./agent-cleanup.js');
      await runFlowpinCleanup(cleanup.value);
    }
    const loaded = loadAgentConfig({ flags, env: process.env });
    if (!loaded.ok) throw new CliExit(2, `conndrain agent: invalid configuration:\n${loaded.error.map((p) => `  - ${p}`).join('\n')}`);
    await runAgent(loaded.value);
  });
}

async function runAgent(config: AgentConfig): Promise<void> {
  const { createLogger } = await import('../../src/logging.js');
  const logger = createLogger({ level: config.logLevel, component: 'agent' });
  const { loadKubeConnection } = await import('../../kube/load.js');
  const source = { kubeconfig: config.kubeconfig, serviceHost: config.kubernetesServiceHost, servicePort: config.kubernetesServicePort };
  let kube;
  try {
    kube = await loadKubeConnection(source);
  } catch (error) {
    throw new CliExit(2, `conndrain agent: cannot load the kubeconfig${config.kubeconfig === undefined ? ' (in-cluster)' : ` ${config.kubeconfig}`}: ${(error as Error).message}`);
  }
  let netlink;
  try {
    const { openNetlink } = await import('netlink-native');
    netlink = openNetlink();
  } catch (error) {
    throw new CliExit(1, `conndrain agent: cannot open netlink (the agent needs the netlink-native addon and NET_ADMIN): ${(error as Error).message}`);
  }
  const { Agent } = await import('../../agent/agent.js');
  const { listenReusePort } = await import('netlink-native');
  const agent = new Agent({ config, logger, netlink, kube, listenSocket: (host, port) => listenReusePort(host, port) });
  const stopped = new Promise<string>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  try {
    await agent.start();
  } catch (error) {
    await agent.stop().catch(() => undefined);
    netlink.close();
    throw new CliExit(1, `conndrain agent: cannot start: ${(error as Error).message}`);
  }
  const signal = await stopped;
  // SIGTERM or SIGINT: a graceful handover (docs/handover.md): no new connections, the held
  // drain calls answered as their drains end, then exit. A second signal stops at once.
  logger.info({ signal }, 'stopping: handing over');
  const again = new Promise<void>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  await Promise.race([agent.handOver(), again.then(() => logger.warn('second signal: stopping now, held drain calls are cut'))]);
  await agent.stop();
  netlink.close();
  throw new CliExit(0);
}
