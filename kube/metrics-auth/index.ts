export { MetricsAccess, bearerTokenOf, type AccessDecision, type MetricsAccessOptions } from './metrics-access.js';
export { serveMetrics } from './serve-metrics.js';
export { loadServingPair, type ServingPair } from './serving-pair.js';
