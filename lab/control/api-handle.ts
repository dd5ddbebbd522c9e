import { writeFile } from 'node:fs/promises';
import { NetnsProcess } from '../sys/netns-process.js';
import type { ApiCommand, ApiReply } from './api-commands.js';

type WithoutId<T> = T extends unknown ? Omit<T, 'id'> : never;
type Command = WithoutId<ApiCommand>;

/** The lab's handle on the API stand-in running in the control namespace. */
export class ApiHandle {
  private nextId = 1;

  private constructor(
    private readonly process: NetnsProcess,
    readonly port: number,
  ) {}

  static async start(controlNetns: string, port = 16443, timeoutMs = 30_000): Promise<ApiHandle> {
    const process = NetnsProcess.startScript('api stand-in', controlNetns, '../control/api-host.ts', [String(port)]);
    await process.waitFor((line) => (line as { k?: string }).k === 'ready', timeoutMs, 'ready line');
    return new ApiHandle(process, port);
  }

  /** Sends a command; resolves with the reply (its `t` is when the change was published). */
  async call(command: Command): Promise<ApiReply> {
    const id = this.nextId++;
    const replied = this.process.waitFor((line) => (line as ApiReply).k === 'reply' && (line as ApiReply).id === id, 30_000, `reply to ${command.op}`);
    this.process.send(JSON.stringify({ ...command, id }));
    const reply = (await replied) as ApiReply;
    if (!reply.ok && command.op !== 'probe') throw new Error(`API stand-in: ${command.op} failed: ${reply.error ?? 'unknown'}`);
    return reply;
  }

  /** Writes a kubeconfig for an agent on a node that reaches the control namespace at `address`. */
  async writeKubeconfig(path: string, address: string): Promise<string> {
    const text = [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: lab',
      `  cluster: {server: "http://${address}:${this.port}", insecure-skip-tls-verify: true}`,
      'users:',
      '- name: lab',
      '  user: {token: lab-token}',
      'contexts:',
      '- name: lab',
      '  context: {cluster: lab, user: lab}',
      'current-context: lab',
      '',
    ].join('\n');
    await writeFile(path, text);
    return path;
  }

  stop(): Promise<number | null> {
    return this.process.stop();
  }
}
