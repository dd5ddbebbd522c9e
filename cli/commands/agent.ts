import type { Command } from 'commander';
import type { AgentStartReason } from '../../agent/run-agent.js';
import { AGENT_OPTIONS, loadAgentCleanupConfig, loadAgentConfig, type AgentConfig } from '../../src/config/agent.js';
import { CliExit } from '../exit.js';
import { addConfigOptions } from '../options.js';

/**
 * `conndrain agent`: the node agent (DaemonSet, hostNetwork). Configuration comes only from
 * src/config/agent.ts (flags and env); every problem is printed at once. The agent component
 * (agent/run-agent.ts, with the netlink addon) is loaded lazily (the webhook image has neither);
 * its typed start errors become exit codes here. SIGTERM/SIGINT hand over:
 * the listeners close (a second agent on the same ports takes new calls), held drain calls are
 * answered as their drains end, then it exits with holds kept in place (docs/handover.md). A
 * part that fails after start stops the agent, which exits 1.
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
    await startAgent(loaded.value);
  });
}

/** Exit codes of a failed start: a configuration the agent cannot use is 2, the node or a part refusing is 1. */
const START_EXIT: Record<AgentStartReason, number> = { kubeconfig: 2, netlink: 1, 'port-in-use': 1, permission: 1, start: 1 };

async function startAgent(config: AgentConfig): Promise<never> {
  const { createLogger } = await import('../../log/logger.js');
  const logger = createLogger({ level: config.logLevel, component: 'agent' });
  const { runAgent, AgentStartError, AgentFailedError } = await import('../../agent/run-agent.js');
  // Listening before the agent starts: a signal during start-up hands over as soon as it is up.
  const first = new Promise<string>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  const second = (): Promise<void> => new Promise<void>((resolve) => {
    process.once('SIGTERM', () => resolve());
    process.once('SIGINT', () => resolve());
  });
  try {
    await runAgent(config, { logger, shutdown: { first, second } });
  } catch (error) {
    if (error instanceof AgentStartError) throw new CliExit(START_EXIT[error.reason], `conndrain agent: ${error.message}`);
    // A part failed after start: the agent stopped gracefully; the DaemonSet restarts it.
    if (error instanceof AgentFailedError) throw new CliExit(1, `conndrain agent: stopped: ${error.message}`);
    throw error;
  }
  throw new CliExit(0);
}
