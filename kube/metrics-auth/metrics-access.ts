/**
 * Who may read `/metrics`: the bearer token of each scrape is checked with a TokenReview, then
 * a SubjectAccessReview for `get` on the non-resource URL, as controller-runtime's
 * `WithAuthenticationAndAuthorization` filter does (the RBAC a scraper needs is the usual
 * `nonResourceURLs: ["/metrics"], verbs: ["get"]`). Decisions are cached briefly
 * (decision-cache.ts); concurrent scrapes with one token share one review; at most
 * `maxInFlight` distinct reviews run at once so a flood of made-up tokens cannot queue
 * unbounded work against the API server. An API server that cannot answer gives 503: never
 * the metrics, never a crash.
 */
import type { Logger } from 'pino';
import type { KubeConnection } from '../connection.js';
import { reviewAccess, reviewToken, type NonResourceRequest } from './access-reviews.js';
import { DecisionCache, DEFAULT_CACHE_TTLS, digestOf, type CacheTtls, type CachedDecision } from './decision-cache.js';

export interface AccessDecision {
  /** 200 allowed, 401 no or unknown token, 403 denied, 503 the API server could not decide. */
  status: 200 | 401 | 403 | 503;
  /** One line for the answer's body and the log (never the token). */
  why: string;
}

export interface MetricsAccessOptions {
  kube: KubeConnection;
  logger: Logger;
  /** What is asked for; `get` on `/metrics` unless told. */
  request?: NonResourceRequest;
  cache?: Partial<CacheTtls>;
  /** Deadline of each review call. */
  reviewTimeoutMs?: number;
  maxInFlight?: number;
  now?: () => number;
}

/** The longest token looked at: service-account JWTs are ~1 KB, OIDC ones a few KB. */
const MAX_TOKEN_LENGTH = 16 * 1024;

/** The token of an `Authorization: Bearer <token>` header; undefined for anything else. */
export function bearerTokenOf(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  const token = match?.[1];
  return token !== undefined && token.length <= MAX_TOKEN_LENGTH ? token : undefined;
}

export class MetricsAccess {
  private readonly cache: DecisionCache;
  private readonly inFlight = new Map<string, Promise<AccessDecision>>();
  private readonly request: NonResourceRequest;
  private readonly reviewTimeoutMs: number;
  private readonly maxInFlight: number;

  constructor(private readonly options: MetricsAccessOptions) {
    this.cache = new DecisionCache({ ...DEFAULT_CACHE_TTLS, ...options.cache }, options.now);
    this.request = options.request ?? { path: '/metrics', verb: 'get' };
    this.reviewTimeoutMs = options.reviewTimeoutMs ?? 5_000;
    this.maxInFlight = options.maxInFlight ?? 32;
  }

  /** The decision for one request's `Authorization` header. Never rejects. */
  authorize(authorization: string | undefined): Promise<AccessDecision> {
    const token = bearerTokenOf(authorization);
    if (token === undefined) return Promise.resolve({ status: 401, why: 'a bearer token is required (Authorization: Bearer <token>)' });
    const key = digestOf(token);
    const cached = this.cache.get(key);
    if (cached !== undefined) return Promise.resolve(cached);
    const running = this.inFlight.get(key);
    if (running !== undefined) return running;
    if (this.inFlight.size >= this.maxInFlight) return Promise.resolve({ status: 503, why: 'too many access reviews in flight; retry' });
    const review = this.review(token).then(
      (decision) => {
        this.cache.put(key, decision);
        return decision;
      },
      (error: unknown): AccessDecision => {
        this.options.logger.warn({ err: error }, 'metrics access: the API server could not review the scrape');
        return { status: 503, why: 'cannot check the token with the API server; retry' };
      },
    ).finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, review);
    return review;
  }

  private async review(token: string): Promise<CachedDecision> {
    const { kube, logger } = this.options;
    const identity = await reviewToken(kube, token, this.reviewTimeoutMs);
    if (!identity.authenticated) {
      logger.debug({ why: identity.why }, 'metrics access: token not authenticated');
      return { status: 401, why: 'token not authenticated' };
    }
    const access = await reviewAccess(kube, identity.user, this.request, this.reviewTimeoutMs);
    if (!access.allowed) {
      logger.info({ user: identity.user.username, why: access.why }, 'metrics access denied');
      return { status: 403, why: `${identity.user.username} may not ${this.request.verb} ${this.request.path}` };
    }
    return { status: 200, why: 'allowed' };
  }
}
