/**
 * Metrics the alerts and the dashboard may read besides conndrain's own
 * (src/metric-names.ts): the field's standard exporters, each with where it comes from.
 */
export const STANDARD_METRICS: Readonly<Record<string, string>> = {
  up: 'Prometheus (scrape health of every target)',
  apiserver_request_total: 'kube-apiserver',
  apiserver_admission_webhook_fail_open_count: 'kube-apiserver >= 1.24 (calls of failurePolicy Ignore webhooks that failed)',
  apiserver_admission_webhook_rejection_count: 'kube-apiserver',
  apiserver_admission_webhook_admission_duration_seconds_bucket: 'kube-apiserver (histogram)',
  kube_daemonset_status_number_unavailable: 'kube-state-metrics',
  kube_deployment_status_replicas_available: 'kube-state-metrics',
  node_nf_conntrack_entries: 'node_exporter (conntrack collector)',
  node_nf_conntrack_entries_limit: 'node_exporter (conntrack collector)',
  node_nf_conntrack_stat_insert_failed: 'node_exporter (conntrack collector, --collector.conntrack)',
};

/** Suffixes prom-client adds to a histogram; conndrain's histograms are the `_seconds` metrics. */
const HISTOGRAM_SUFFIXES = ['_bucket', '_sum', '_count'];

/** Whether `name` is one of ours (or a series of one of our histograms) or a standard exporter metric. */
export function isKnownMetric(name: string, ours: readonly string[]): boolean {
  if (ours.includes(name) || name in STANDARD_METRICS) return true;
  return HISTOGRAM_SUFFIXES.some((suffix) => {
    if (!name.endsWith(suffix)) return false;
    const base = name.slice(0, -suffix.length);
    return base.endsWith('_seconds') && ours.includes(base);
  });
}
