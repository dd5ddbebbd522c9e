/**
 * A "node" for kernel tests of the real agent process: a network namespace of its own, the
 * API server STAND-IN (test/apiserver) reached from inside it through a relay, relays that
 * bring the agent's drain and metrics ports out as unix sockets in a temporary folder, and a
 * netlink handle into that namespace. Agents started here are killed by stop().
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { openNetlink, type NativeNetlink } from 'netlink-native';
import { FakeApiServer } from '../apiserver/server.js';
import { putWorkload } from '../apiserver/workload.js';
import { addNetns, AgentProcess, API_PORT_IN_NODE, deleteNetns, DRAIN_PORT, METRICS_PORT, PROBES_PORT, startRelay } from './node-netns.js';

export class AgentNode {
  readonly api = new FakeApiServer();
  /** The namespace's name: the prefix, the pid and a random suffix (other tests run at the same time). */
  readonly ns: string;
  private dir = '';
  private handle: NativeNetlink | undefined;
  private readonly relays: ChildProcess[] = [];
  private readonly agents: AgentProcess[] = [];

  constructor(private readonly prefix: string) {
    this.ns = `${prefix}-${process.pid}-${Math.floor(Math.random() * 1e5)}`;
  }

  /** Creates the namespace, the folder, the API stand-in and the relays (needs root). */
  async start(): Promise<void> {
    this.dir = mkdtempSync(join(tmpdir(), `${this.prefix}-`));
    addNetns(this.ns);
    await this.api.start();
    await this.api.listenUnix(this.path('api.sock'));
    this.api.writeKubeconfig(this.path('kubeconfig'), `http://127.0.0.1:${API_PORT_IN_NODE}`);
    putWorkload(this.api); // the opted-in namespace and Service: agents learn other nodes' pods from its EndpointSlices
    this.relays.push(await startRelay(this.ns, `tcp:127.0.0.1:${API_PORT_IN_NODE}`, `unix:${this.path('api.sock')}`));
    this.relays.push(await startRelay(this.ns, `unix:${this.path('metrics.sock')}`, `tcp:127.0.0.1:${METRICS_PORT}`));
    this.relays.push(await startRelay(this.ns, `unix:${this.path('probes.sock')}`, `tcp:127.0.0.1:${PROBES_PORT}`));
    this.relays.push(await startRelay(this.ns, `unix:${this.path('drain.sock')}`, `tcp:127.0.0.1:${DRAIN_PORT}`));
    this.handle = openNetlink({ netns: this.ns });
  }

  /** Kills every agent started here, then removes what start() made (safe when it never ran). */
  async stop(): Promise<void> {
    for (const a of this.agents) a.kill('SIGKILL');
    await Promise.all(this.agents.map((a) => a.exited));
    for (const r of this.relays) r.kill('SIGTERM');
    this.handle?.close();
    await this.api.close();
    if (this.dir === '') return;
    deleteNetns(this.ns);
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** A file in the node's temporary folder (drain.sock, metrics.sock, probes.sock, kubeconfig, state files). */
  path(...parts: string[]): string {
    return join(this.dir, ...parts);
  }

  /** Netlink into the node's namespace (after start()). */
  get netlink(): NativeNetlink {
    if (this.handle === undefined) throw new Error('AgentNode.netlink before start()');
    return this.handle;
  }

  /**
   * Starts `conndrain agent` in the namespace for node-1, with the stand-in's kubeconfig, the
   * given state file (under the folder), the relayed drain and metrics ports, and `extra` flags
   * (`entry`: AgentProcess.start's).
   */
  startAgent(stateFile: string[], extra: string[] = [], entry?: readonly string[]): AgentProcess {
    const agent = AgentProcess.start(this.ns, [
      '--node-name', 'node-1', '--kubeconfig', this.path('kubeconfig'), '--state-file', this.path(...stateFile),
      '--drain-port', String(DRAIN_PORT), '--metrics-port', String(METRICS_PORT), '--metrics-address', '127.0.0.1', '--metrics-secure=false',
      ...extra,
    ], entry);
    this.agents.push(agent);
    return agent;
  }
}
