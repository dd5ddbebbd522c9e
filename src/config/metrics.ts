import type { OptionSpec } from './options.js';

/**
 * `--metrics-secure`, the same flag for the agent and the webhook: /metrics only for a bearer
 * token the API server authenticates (TokenReview) and authorizes for `get` on `/metrics`
 * (SubjectAccessReview), as controller-runtime serves metrics by default.
 */
export const METRICS_SECURE_OPTION = {
  kind: 'bool',
  flag: 'metrics-secure',
  env: 'CONNDRAIN_METRICS_SECURE',
  default: true,
  description: '/metrics only for a bearer token the API server authenticates (TokenReview) and authorizes for get on /metrics (SubjectAccessReview); false serves it to anyone (labs, benches)',
} as const satisfies OptionSpec;
