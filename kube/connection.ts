/**
 * How the agent reaches the API server: the server URL and what every request carries (a
 * TLS/keep-alive agent, the Authorization header). The shape is two methods of
 * `@kubernetes/client-node`'s KubeConfig, so a full library KubeConfig fits wherever a
 * KubeConnection is asked for (the agent's own requests, list and watch, use node:http(s)).
 *
 * Why a lean one: importing the library's KubeConfig evaluates every generated API client and
 * model of the library (its RSS cost: docs/design/agent.md). `LeanKubeConnection` covers what a DaemonSet uses: the in-cluster service
 * account (token file re-read as it rotates, CA file) and kubeconfig files with a token or
 * token file, basic auth, client certificate, CA, `insecure-skip-tls-verify`,
 * `tls-server-name`. Anything else (exec plugins, auth providers, proxies) loads the library's
 * KubeConfig instead (load.ts).
 */
import { readFileSync, statSync } from 'node:fs';
import type { Agent as HttpAgentType } from 'node:http';
import { Agent as HttpAgent } from './node-http.js';
import { Agent as HttpsAgent, type RequestOptions } from 'node:https';

export interface KubeConnection {
  getCurrentCluster(): { server: string } | null;
  /** Options for one request: `agent` (node:http(s) Agent) and `headers` (a record or an iterable of pairs). */
  applyToFetchOptions(opts: RequestOptions): Promise<{ agent?: unknown; headers?: unknown }>;
}

export interface LeanTls {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  /** false: insecure-skip-tls-verify. */
  rejectUnauthorized?: boolean;
  servername?: string;
}

export type LeanAuth =
  | { kind: 'none' }
  | { kind: 'token'; token: string }
  /** A projected service-account token: re-read when the file changes (tokens rotate hourly). */
  | { kind: 'tokenFile'; path: string }
  | { kind: 'basic'; username: string; password: string };

/** How often a token file's mtime is checked (the library's FileAuth re-reads every 60 s). */
const TOKEN_CHECK_MS = 10_000;

export class LeanKubeConnection implements KubeConnection {
  private readonly agent: HttpAgentType;
  private token: { value: string; mtimeMs: number; checkedAt: number } | undefined;

  constructor(
    private readonly server: string,
    tls: LeanTls,
    private readonly auth: LeanAuth,
  ) {
    const url = new URL(server);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`unsupported API server URL ${server}`);
    this.agent = url.protocol === 'https:' ? new HttpsAgent({ keepAlive: true, ...tls }) : new HttpAgent({ keepAlive: true });
  }

  getCurrentCluster(): { server: string } {
    return { server: this.server.replace(/\/+$/, '') };
  }

  applyToFetchOptions(_opts: RequestOptions): Promise<{ agent: HttpAgentType; headers: Record<string, string> }> {
    try {
      const headers: Record<string, string> = {};
      const authorization = this.authorization();
      if (authorization !== undefined) headers.Authorization = authorization;
      return Promise.resolve({ agent: this.agent, headers });
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }

  /** Closes idle keep-alive sockets (shutdown). */
  destroy(): void {
    this.agent.destroy();
  }

  private authorization(): string | undefined {
    switch (this.auth.kind) {
      case 'none':
        return undefined;
      case 'token':
        return `Bearer ${this.auth.token}`;
      case 'basic':
        return `Basic ${Buffer.from(`${this.auth.username}:${this.auth.password}`).toString('base64')}`;
      case 'tokenFile':
        return `Bearer ${this.fileToken(this.auth.path)}`;
    }
  }

  private fileToken(path: string): string {
    const now = Date.now();
    if (this.token !== undefined && now - this.token.checkedAt < TOKEN_CHECK_MS) return this.token.value;
    const mtimeMs = statSync(path).mtimeMs;
    if (this.token === undefined || this.token.mtimeMs !== mtimeMs) {
      this.token = { value: readFileSync(path, 'utf8').trim(), mtimeMs, checkedAt: now };
    } else {
      this.token.checkedAt = now;
    }
    return this.token.value;
  }
}
