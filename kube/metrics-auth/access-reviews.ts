/**
 * The two delegated checks of a scrape, as controller-runtime's `pkg/metrics/filters` and
 * kube-rbac-proxy make them: a TokenReview says who holds the bearer token, a
 * SubjectAccessReview says whether that user may `get` the non-resource URL. Each call has its
 * own short deadline: a scrape must not wait for the API client's minute-long default.
 */
import type { KubeConnection } from '../connection.js';
import { errorMessage, prepareRequest } from '../request.js';

/** Who the API server says holds a token (TokenReview status.user). */
export interface ReviewedUser {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export type TokenVerdict = { authenticated: true; user: ReviewedUser } | { authenticated: false; why: string };

export type AccessVerdict = { allowed: true } | { allowed: false; why: string };

/** The non-resource request a scrape makes (`get` on the path). */
export interface NonResourceRequest {
  path: string;
  verb: string;
}

const MAX_ANSWER_BYTES = 256 * 1024;

/** POSTs one review object and returns the API server's answer; any non-2xx, timeout or bad JSON rejects. */
async function postReview(conn: KubeConnection, path: string, body: unknown, timeoutMs: number): Promise<Record<string, unknown>> {
  const { url, headers, agent, send } = await prepareRequest(conn, path, {});
  const payload = Buffer.from(JSON.stringify(body));
  headers['Content-Type'] = 'application/json';
  headers['Content-Length'] = payload.length;
  return new Promise((resolve, reject) => {
    const req = send(url, { method: 'POST', headers, agent, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_ANSWER_BYTES) req.destroy(new Error(`POST ${url.pathname}: answer larger than ${MAX_ANSWER_BYTES} bytes`));
        else chunks.push(c);
      });
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const code = res.statusCode ?? 0;
        if (code < 200 || code >= 300) {
          reject(new Error(`POST ${url.pathname}: HTTP ${code}: ${errorMessage(text)}`));
          return;
        }
        try {
          const parsed: unknown = JSON.parse(text);
          if (typeof parsed !== 'object' || parsed === null) throw new Error('not a JSON object');
          resolve(parsed as Record<string, unknown>);
        } catch (error) {
          reject(new Error(`POST ${url.pathname}: unreadable answer: ${(error as Error).message}`));
        }
      });
    });
    req.on('timeout', () => req.destroy(new Error(`POST ${url.pathname}: no answer in ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}

function statusOf(answer: Record<string, unknown>): Record<string, unknown> {
  const status = answer.status;
  return typeof status === 'object' && status !== null ? (status as Record<string, unknown>) : {};
}

function stringList(value: unknown): string[] | undefined {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : undefined;
}

/** `POST /apis/authentication.k8s.io/v1/tokenreviews`: who holds `token`. Rejects when the API cannot answer. */
export async function reviewToken(conn: KubeConnection, token: string, timeoutMs: number): Promise<TokenVerdict> {
  const answer = await postReview(conn, '/apis/authentication.k8s.io/v1/tokenreviews', {
    apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token },
  }, timeoutMs);
  const status = statusOf(answer);
  const user = status.user as Record<string, unknown> | undefined;
  if (status.authenticated !== true || typeof user?.username !== 'string') {
    return { authenticated: false, why: typeof status.error === 'string' && status.error !== '' ? status.error : 'token not authenticated' };
  }
  const reviewed: ReviewedUser = { username: user.username };
  if (typeof user.uid === 'string') reviewed.uid = user.uid;
  const groups = stringList(user.groups);
  if (groups !== undefined) reviewed.groups = groups;
  if (typeof user.extra === 'object' && user.extra !== null) {
    reviewed.extra = Object.fromEntries(Object.entries(user.extra as Record<string, unknown>).map(([k, v]) => [k, stringList(v) ?? []]));
  }
  return { authenticated: true, user: reviewed };
}

/** `POST /apis/authorization.k8s.io/v1/subjectaccessreviews` for a non-resource URL. Rejects when the API cannot answer. */
export async function reviewAccess(conn: KubeConnection, user: ReviewedUser, request: NonResourceRequest, timeoutMs: number): Promise<AccessVerdict> {
  const answer = await postReview(conn, '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    spec: { user: user.username, uid: user.uid, groups: user.groups, extra: user.extra, nonResourceAttributes: { path: request.path, verb: request.verb } },
  }, timeoutMs);
  const status = statusOf(answer);
  if (status.allowed === true && status.denied !== true) return { allowed: true };
  const reason = typeof status.reason === 'string' && status.reason !== '' ? status.reason : undefined;
  return { allowed: false, why: reason ?? `${user.username} may not ${request.verb} ${request.path}` };
}
