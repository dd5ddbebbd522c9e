import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NetnsProcess, REPO_ROOT } from '../sys/netns-process.js';
import type { ApiHandle } from './api-handle.js';

export interface AgentStart {
  /** Kubernetes node name (`node-1`). */
  nodeName: string;
  netns: string;
  /** The control namespace's address as seen from this node. */
  apiAddress: string;
  /** This node's address as seen from the control namespace (for /readyz). */
  nodeAddress: string;
  drainPort?: number;
  metricsPort?: number;
  probesPort?: number;
  /** Extra `conndrain agent` flags. */
  flags?: string[];
  /** The CLI bundled as plain JS (sys/agent-bundle.ts); cli/main.ts through tsx when absent. */
  bundle?: string;
}

/**
 * The real `conndrain agent` process running in a node namespace (`ip netns exec`), reading
 * pods from the API stand-in over the control link: the same binary and flags as in the
 * DaemonSet, only the API server is the stand-in.
 */
export class AgentHandle {
  private constructor(
    readonly nodeName: string,
    readonly process: NetnsProcess,
    readonly dir: string,
    readonly readyUrl: string,
  ) {}

  static async start(api: ApiHandle, options: AgentStart): Promise<AgentHandle> {
    const dir = await mkdtemp(join(tmpdir(), `conndrain-lab-${options.nodeName}-`));
    const kubeconfig = await api.writeKubeconfig(join(dir, 'kubeconfig'), options.apiAddress);
    const metricsPort = options.metricsPort ?? 9902;
    const probesPort = options.probesPort ?? 9903;
    const cli = options.bundle === undefined ? ['--import', 'tsx', join(REPO_ROOT, 'cli/main.ts')] : [options.bundle];
    const args = [
      ...cli, 'agent',
      '--node-name', options.nodeName,
      '--kubeconfig', kubeconfig,
      '--state-file', join(dir, 'state.json'),
      '--drain-port', String(options.drainPort ?? 9901),
      '--metrics-port', String(metricsPort),
      // Nothing scrapes the lab's agents (plain /metrics); /readyz is read over the node link.
      '--metrics-secure=false',
      '--probes-address', '0.0.0.0',
      '--probes-port', String(probesPort),
      ...(options.flags ?? []),
    ];
    const process = NetnsProcess.start(`agent ${options.nodeName}`, options.netns, globalThis.process.execPath, args);
    return new AgentHandle(options.nodeName, process, dir, `http://${options.nodeAddress}:${probesPort}/readyz`);
  }

  /** Waits until the agent's /readyz answers 200 (its first list is synced). */
  async waitReady(api: ApiHandle, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const exited = this.process.waitFor(() => false, timeoutMs + 1000, 'exit').catch((error: Error) => error);
    while (Date.now() < deadline) {
      const reply = await api.call({ op: 'probe', url: this.readyUrl });
      if (reply.status === 200) return;
      const early = await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve(undefined), 200))]);
      if (early instanceof Error && early.message.includes('exited')) throw early;
    }
    const lastLogs = this.process.lines.slice(-8).map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n');
    throw new Error(`agent ${this.nodeName}: /readyz not 200 within ${timeoutMs} ms; last log lines:\n${lastLogs}\nstderr: ${this.process.recentStderr.slice(-2000)}`);
  }

  /** Log lines the agent wrote (pino JSON on stdout). */
  get logs(): unknown[] {
    return this.process.lines;
  }

  async stop(): Promise<void> {
    await this.process.stop(3000, 'SIGTERM');
    await rm(this.dir, { recursive: true, force: true });
  }
}
