/** What the Agent is built from: its configuration and everything it touches (stand-ins in tests). */
import type { Logger } from 'pino';
import type { ConntrackApi, ConntrackEventsApi, IpvsApi } from 'netlink-native/types';
import type { Clock } from '../time/clock.js';
import type { KubeConnection } from '../kube/connection.js';
import type { AgentConfig } from '../src/config/agent.js';
import type { DatapathProbeOptions, FlowTimeouts } from './drain/index.js';
import type { EventSink } from './pods/index.js';
import type { AgentMetrics } from './runtime/index.js';

export interface AgentDeps {
  config: AgentConfig;
  logger: Logger;
  /** openConntrackEvents is optional: without it (or with --conntrack-events=false) every conntrack answer comes from a dump. */
  netlink: ConntrackApi & IpvsApi & Partial<ConntrackEventsApi>;
  /** The API server (the watch, Events): kube/load.ts, or a library KubeConfig. */
  kube: KubeConnection;
  clock?: Clock;
  flowTimeouts?: FlowTimeouts;
  eventSink?: EventSink;
  metrics?: AgentMetrics;
  /** Where the flow-visibility probe reads the node (tests: a fake sysfs). */
  datapathProbe?: DatapathProbeOptions;
  /**
   * Opens a listening TCP socket with SO_REUSEPORT and returns its descriptor (runAgent passes
   * netlink-native's listenReusePort): a second agent on the node then binds the same ports
   * (zero-gap handover). Without it the servers listen the ordinary way (tests).
   */
  listenSocket?: (host: string, port: number) => number;
  /** Where net.ipv4.tcp_migrate_req is set for the handover (tests: a file of their own). */
  acceptMigrationSysctl?: string;
}

export interface AgentPorts {
  drainPort: number;
  metricsPort: number;
  probesPort: number;
}
