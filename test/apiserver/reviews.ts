/**
 * The stand-in's TokenReview and SubjectAccessReview, programmable per token:
 *   POST /apis/authentication.k8s.io/v1/tokenreviews          status.authenticated, status.user
 *   POST /apis/authorization.k8s.io/v1/subjectaccessreviews   status.allowed for the user's non-resource request
 * `allow(token, user)` makes a token authenticate as `user` and be allowed `get` on
 * `/metrics`; `deny(token, user)` authenticates it but refuses access; any other token is not
 * authenticated. `failWith(status)` makes both reviews answer that status (an API server in
 * trouble). Reviews are counted, for cache assertions.
 */
import type { IncomingMessage } from 'node:http';
import type { JsonObject } from './server.js';

type Send = (code: number, body: unknown) => void;

const TOKEN_REVIEWS = '/apis/authentication.k8s.io/v1/tokenreviews';
const ACCESS_REVIEWS = '/apis/authorization.k8s.io/v1/subjectaccessreviews';

interface Grant {
  user: string;
  /** Non-resource paths the user may `get`. */
  paths: Set<string>;
}

export class AccessReviews {
  private readonly tokens = new Map<string, Grant>();
  private failure: number | undefined;
  /** Reviews answered (failures included). */
  readonly counts = { tokenReviews: 0, accessReviews: 0 };
  /** The spec of every SubjectAccessReview, in order. */
  readonly accessSpecs: JsonObject[] = [];

  /** `token` authenticates as `user`, who may get `paths` (default `/metrics`). */
  allow(token: string, user: string, paths: readonly string[] = ['/metrics']): void {
    this.tokens.set(token, { user, paths: new Set(paths) });
  }

  /** `token` authenticates as `user`, who may get nothing. */
  deny(token: string, user: string): void {
    this.tokens.set(token, { user, paths: new Set() });
  }

  /** Both reviews answer `status` (undefined: answer normally again). */
  failWith(status: number | undefined): void {
    this.failure = status;
  }

  private grantOf(user: string): Grant | undefined {
    return [...this.tokens.values()].find((g) => g.user === user);
  }

  /** Answers the request when it is one of the two reviews; false otherwise. */
  handle(req: IncomingMessage, pathname: string, send: Send, readJson: (then: (body: JsonObject | undefined) => void) => void): boolean {
    if (req.method !== 'POST' || (pathname !== TOKEN_REVIEWS && pathname !== ACCESS_REVIEWS)) return false;
    readJson((body) => {
      const spec = (body?.spec ?? {}) as Record<string, unknown>;
      if (pathname === TOKEN_REVIEWS) this.counts.tokenReviews += 1;
      else {
        this.counts.accessReviews += 1;
        this.accessSpecs.push(spec);
      }
      if (this.failure !== undefined) {
        send(this.failure, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'stand-in: reviews failing', reason: 'InternalError', code: this.failure });
        return;
      }
      if (body === undefined) {
        send(400, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'stand-in: body is not JSON', reason: 'BadRequest', code: 400 });
        return;
      }
      if (pathname === TOKEN_REVIEWS) {
        const grant = typeof spec.token === 'string' ? this.tokens.get(spec.token) : undefined;
        const status = grant === undefined
          ? { authenticated: false, error: 'stand-in: unknown token' }
          : { authenticated: true, user: { username: grant.user, uid: `uid-${grant.user}`, groups: ['system:authenticated'] } };
        send(201, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', metadata: {}, spec, status });
        return;
      }
      const attributes = (spec.nonResourceAttributes ?? {}) as { path?: unknown; verb?: unknown };
      const grant = typeof spec.user === 'string' ? this.grantOf(spec.user) : undefined;
      const allowed = grant !== undefined && attributes.verb === 'get' && typeof attributes.path === 'string' && grant.paths.has(attributes.path);
      send(201, { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', metadata: {}, spec, status: allowed ? { allowed: true } : { allowed: false, reason: 'stand-in: no RBAC rule allows it' } });
    });
    return true;
  }
}
