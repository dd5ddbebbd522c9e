/**
 * runAgent(config, deps): the node agent as a component entry point. It connects to the API
 * server, opens netlink, starts the Agent, hands over on the first shutdown request (held
 * drain calls are answered as their drains end; a second request cuts them short), stops, and
 * resolves. Every failure to start is an AgentStartError with a reason the CLI maps to an exit
 * code and a sentence; a part that fails after start stops the agent and rejects with an
 * AgentFailedError (a non-zero exit); nothing here ends the process.
 */
import type { Logger } from 'pino';
import type { AgentConfig } from '../src/config/agent.js';
import type { KubeConnection } from '../kube/connection.js';
import type { Agent, AgentDeps } from './agent.js';
import { RunnableStartError, type RunnableFailedError } from './runnable.js';

/**
 * Why the agent could not start: `kubeconfig` (no usable API server credentials), `netlink`
 * (no addon, or no NET_ADMIN), `port-in-use` (the drain or metrics port), `permission` (a port
 * or a file it may not use), `start` (anything else a part failed on).
 */
export type AgentStartReason = 'kubeconfig' | 'netlink' | 'port-in-use' | 'permission' | 'start';

export class AgentStartError extends Error {
  constructor(readonly reason: AgentStartReason, message: string, options?: { cause?: unknown; runnable?: string }) {
    super(message, { cause: options?.cause });
    this.name = 'AgentStartError';
    this.runnable = options?.runnable;
  }

  /** The part that failed to start (health, drain, ...), when one did. */
  readonly runnable: string | undefined;
}

/** A part failed after the agent started: the agent stopped (every part, gracefully). */
export class AgentFailedError extends Error {
  /** The part that failed (health, drain, ...). */
  readonly runnable: string;

  constructor(failure: RunnableFailedError) {
    super(failure.message, { cause: failure.cause });
    this.name = 'AgentFailedError';
    this.runnable = failure.runnable;
  }
}

/** When to stop: the first request hands over, a second one (during the handover) stops at once. */
export interface ShutdownRequests {
  /** Resolves with what asked (SIGTERM, SIGINT). */
  first: Promise<string>;
  /** Called once the first came: resolves on the next request. */
  second(): Promise<void>;
}

/** Netlink for the agent, closed when it stops; `listenReusePort` opens its listeners with SO_REUSEPORT (handover). */
export interface AgentNetlink {
  netlink: AgentDeps['netlink'] & { close(): void };
  listenReusePort?: (host: string, port: number) => number;
}

export interface RunAgentDeps {
  logger: Logger;
  shutdown: ShutdownRequests;
  /** The API connection (default: kube/load.ts from the config's kubeconfig or the in-cluster account). */
  loadKube?: () => Promise<KubeConnection>;
  /** The netlink addon (default: netlink-native, opened in this network namespace). */
  loadNetlink?: () => Promise<AgentNetlink>;
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** A failure of Agent.start() as a typed error (the port, or the permission, in the reason). */
export function startErrorOf(error: unknown): AgentStartError {
  const runnable = error instanceof RunnableStartError ? error.runnable : undefined;
  const cause = error instanceof RunnableStartError ? error.cause : error;
  const code = codeOf(cause);
  const reason: AgentStartReason = code === 'EADDRINUSE' ? 'port-in-use' : code === 'EACCES' || code === 'EPERM' ? 'permission' : 'start';
  const message = cause instanceof Error ? cause.message : String(cause);
  return new AgentStartError(reason, `cannot start: ${message}`, { cause, runnable });
}

async function defaultKube(config: AgentConfig): Promise<KubeConnection> {
  const { loadKubeConnection } = await import('../kube/load.js');
  return loadKubeConnection({ kubeconfig: config.kubeconfig, serviceHost: config.kubernetesServiceHost, servicePort: config.kubernetesServicePort });
}

async function defaultNetlink(): Promise<AgentNetlink> {
  const native = await import('netlink-native');
  return { netlink: native.openNetlink(), listenReusePort: (host, port) => native.listenReusePort(host, port) };
}

export async function runAgent(config: AgentConfig, deps: RunAgentDeps): Promise<void> {
  const { logger } = deps;
  let kube: KubeConnection;
  try {
    kube = await (deps.loadKube ?? (() => defaultKube(config)))();
  } catch (error) {
    throw new AgentStartError('kubeconfig', `cannot load the kubeconfig${config.kubeconfig === undefined ? ' (in-cluster)' : ` ${config.kubeconfig}`}: ${(error as Error).message}`, { cause: error });
  }
  let native: AgentNetlink;
  try {
    native = await (deps.loadNetlink ?? defaultNetlink)();
  } catch (error) {
    throw new AgentStartError('netlink', `cannot open netlink (the agent needs the netlink-native addon and NET_ADMIN): ${(error as Error).message}`, { cause: error });
  }
  const { netlink, listenReusePort } = native;
  const { Agent } = await import('./agent.js');
  const agent: Agent = new Agent({ config, logger, netlink, kube, listenSocket: listenReusePort });
  try {
    await agent.start();
  } catch (error) {
    await agent.stop().catch(() => undefined);
    netlink.close();
    throw startErrorOf(error);
  }
  // A part that fails (the agent stops itself then) ends the wait, whether for a request or for the handover.
  const failed = agent.failed.then(() => undefined);
  const signal = await Promise.race([deps.shutdown.first, failed]);
  if (signal !== undefined) {
    // A graceful handover (docs/handover.md): no new connections, the held drain calls answered
    // as their drains end, then stop. A second request stops at once.
    logger.info({ signal }, 'stopping: handing over');
    const again = deps.shutdown.second();
    await Promise.race([agent.handOver(), again.then(() => logger.warn('second signal: stopping now, held drain calls are cut')), failed]);
  }
  await agent.stop();
  netlink.close();
  const failure = agent.failure;
  if (failure !== undefined) throw new AgentFailedError(failure);
}
