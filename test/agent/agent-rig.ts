/**
 * The agent wired together in-process for unit tests: the API server STAND-IN (test/apiserver)
 * with a kubeconfig in a temporary folder, and Agents built on it with in-memory netlink
 * stand-ins, silent logs, their own metrics registry and OS-chosen ports.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { MemoryConntrack } from 'netlink-native/memory';
import type { ConntrackEventsApi, IpvsApi } from 'netlink-native/types';
import type { AgentConfig } from '../../src/config/agent.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { loadKubeConnection } from '../../kube/load.js';
import { Agent, type AgentDeps } from '../../agent/agent.js';
import { AgentMetrics } from '../../agent/runtime/metrics.js';
import { DEFAULT_FLOW_TIMEOUTS } from '../../agent/drain/flows.js';
import { memoryNetlink } from '../../bench/agent/stand-ins.js';
import { FakeApiServer } from '../apiserver/server.js';
import { putWorkload } from '../apiserver/workload.js';
import { until as untilPolled } from './node-netns.js';

export interface RigAgentOptions {
  /** Path of the state file (default: `<folder>/<node>.json`). */
  stateFile?: string;
  /** Flags added to (or replacing) the rig's defaults, as the CLI would pass them. */
  flags?: Record<string, string>;
  /** Config fields set after loading (e.g. ipvsHold: false). */
  config?: Partial<AgentConfig>;
  /** Deps other than the config, the logger, the kube connection, the flow timeouts and the metrics. */
  deps?: Partial<AgentDeps>;
  /** The agent's logger (default: pino at `RIG_LOG`, silent when unset). */
  logger?: AgentDeps['logger'];
}

export class AgentRig {
  readonly server = new FakeApiServer();
  private dir = '';

  constructor(private readonly prefix: string) {}

  async start(): Promise<void> {
    await this.server.start();
    this.dir = mkdtempSync(join(tmpdir(), `${this.prefix}-`));
    this.server.writeKubeconfig(this.kubeconfig);
    // The cluster side agents read: namespace shop opted in, Service shop (port 80 -> 8080) over managedPod's pods.
    putWorkload(this.server);
  }

  async stop(): Promise<void> {
    await this.server.close();
    if (this.dir !== '') rmSync(this.dir, { recursive: true, force: true });
  }

  get kubeconfig(): string {
    return this.path('kubeconfig');
  }

  /** A file in the rig's temporary folder. */
  path(name: string): string {
    return join(this.dir, name);
  }

  /**
   * An Agent for `node` on the stand-in: 50 ms hold interval, 20 ms flush window, no gone
   * slack, drain and metrics ports chosen by the OS on 127.0.0.1 (the CLI requires 1..65535;
   * the Agent itself accepts 0), the given netlink (in-memory stand-ins).
   */
  async makeAgent(node: string, netlink: AgentDeps['netlink'], options: RigAgentOptions = {}): Promise<Agent> {
    return new Agent({
      netlink,
      ...options.deps,
      config: this.config(node, options),
      logger: options.logger ?? pino({ level: process.env.RIG_LOG ?? 'silent' }),
      kube: await loadKubeConnection({ kubeconfig: this.kubeconfig }),
      flowTimeouts: DEFAULT_FLOW_TIMEOUTS,
      metrics: new AgentMetrics({ defaultMetrics: false }),
    });
  }

  /** The configuration makeAgent gives `node` (as the CLI would load it, then the rig's ports). */
  config(node: string, options: Pick<RigAgentOptions, 'stateFile' | 'flags' | 'config'> = {}): AgentConfig {
    const loaded = loadAgentConfig({
      flags: {
        nodeName: node, kubeconfig: this.kubeconfig, drainPort: '1', metricsPort: '1', stateFile: options.stateFile ?? this.path(`${node}.json`),
        holdInterval: '50ms', flushWindow: '20ms', goneSlack: '0s', logLevel: process.env.RIG_LOG ?? 'silent', ...options.flags,
      },
      env: {},
    });
    assert.ok(loaded.ok, loaded.ok ? '' : loaded.error.join('; '));
    // Plain /metrics: most tests scrape without an API server reviewing tokens (metrics-access.test.ts does review them).
    return { ...loaded.value, drainPort: 0, metricsPort: 0, metricsAddress: '127.0.0.1', metricsSecure: false, probesPort: 0, probesAddress: '127.0.0.1', ...options.config };
  }
}

/** The in-memory conntrack (with its event stream) and IPVS stand-ins as one netlink. */
export function memoryNetlinkWithEvents(ct: MemoryConntrack, ipvs: IpvsApi): AgentDeps['netlink'] & ConntrackEventsApi {
  return { ...memoryNetlink(ct, ipvs), openConntrackEvents: (o) => ct.openConntrackEvents(o) };
}

export { memoryNetlink };

/** Waits until `check` holds, polling every 10 ms (in-process agents react within milliseconds). */
export function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  return untilPolled(what, check, timeoutMs, 10);
}
