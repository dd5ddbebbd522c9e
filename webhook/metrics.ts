import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { WEBHOOK_METRICS } from '../src/metric-names.js';

/** The webhook's Prometheus metrics, in a registry of its own (one per server, so tests can run several). */
export interface WebhookMetrics {
  registry: Registry;
  /** Admissions by result (allowed, denied, error, rejected) and reason (injected, a skip code, a hygiene code, ...). */
  admissions: Counter<'result' | 'reason'>;
  /** Time from request to answer on /mutate, by result. */
  admissionDuration: Histogram<'result'>;
  /** Certificate pair reloads by result (success, failure). */
  certificateReloads: Counter<'result'>;
  /** notAfter of the serving certificate, unix seconds. */
  certificateExpiry: Gauge;
}

export function createWebhookMetrics(options: { processMetrics?: boolean } = {}): WebhookMetrics {
  const registry = new Registry();
  if (options.processMetrics !== false) collectDefaultMetrics({ register: registry });
  return {
    registry,
    admissions: new Counter({ name: WEBHOOK_METRICS.admissions, help: 'Admission requests answered, by result and reason.', labelNames: ['result', 'reason'], registers: [registry] }),
    admissionDuration: new Histogram({
      name: WEBHOOK_METRICS.admissionDuration,
      help: 'Seconds from receiving an admission request to answering it.',
      labelNames: ['result'],
      // The API server's default webhook timeout is 10 s; the interesting range is well under 10 ms.
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 2.5, 10],
      registers: [registry],
    }),
    certificateReloads: new Counter({ name: WEBHOOK_METRICS.certificateReloads, help: 'Serving certificate pair loads from --cert-dir, by result.', labelNames: ['result'], registers: [registry] }),
    certificateExpiry: new Gauge({ name: WEBHOOK_METRICS.certificateExpiry, help: 'notAfter of the certificate being served, in unix seconds.', registers: [registry] }),
  };
}
