/**
 * Every Prometheus metric conndrain exports, by name. The webhook and the agent register
 * them under these names; the alert rules and the dashboard are tested against this list.
 */
export const WEBHOOK_METRICS = {
  admissions: 'conndrain_webhook_admissions_total',
  admissionDuration: 'conndrain_webhook_admission_duration_seconds',
  certificateReloads: 'conndrain_webhook_certificate_reloads_total',
  certificateExpiry: 'conndrain_webhook_certificate_expiry_timestamp_seconds',
} as const;

export const AGENT_METRICS = {
  drainsActive: 'conndrain_drains_active',
  drains: 'conndrain_drains_total',
  drainsInterrupted: 'conndrain_drains_interrupted_total',
  ipvsAvailable: 'conndrain_ipvs_available',
  ipvsServersHeld: 'conndrain_ipvs_servers_held',
  ipvsRestores: 'conndrain_ipvs_restores_total',
  conntrackDeleted: 'conndrain_conntrack_entries_deleted_total',
  conntrackFlushDuration: 'conndrain_conntrack_flush_duration_seconds',
  conntrackFlushFailures: 'conndrain_conntrack_flush_failures_total',
  ipReuseSkips: 'conndrain_ip_reuse_skips_total',
  conntrackEntries: 'conndrain_conntrack_entries',
  conntrackMax: 'conndrain_conntrack_max',
  conntrackInsertFailed: 'conndrain_conntrack_insert_failed_total',
  conntrackDrop: 'conndrain_conntrack_drop_total',
  conntrackEarlyDrop: 'conndrain_conntrack_early_drop_total',
  watchRestarts: 'conndrain_watch_restarts_total',
  drainApiAnswers: 'conndrain_drain_api_answers_total',
  flowsVisible: 'conndrain_flows_visible',
  podsCached: 'conndrain_pods_cached',
  staleEntries: 'conndrain_stale_entries',
  staleDeleted: 'conndrain_stale_entries_deleted_total',
  staleLivePodSkips: 'conndrain_stale_live_pod_skips_total',
  staleScanDuration: 'conndrain_stale_scan_duration_seconds',
  eventOverruns: 'conndrain_conntrack_event_overruns_total',
  indexResyncs: 'conndrain_conntrack_index_resyncs_total',
  indexFlows: 'conndrain_conntrack_index_flows',
  indexStale: 'conndrain_conntrack_index_stale',
  indexFallbacks: 'conndrain_conntrack_index_fallbacks_total',
  indexVerifyLeftovers: 'conndrain_conntrack_index_verify_leftovers_total',
  flowpinTwins: 'conndrain_flowpin_twins',
  flowpinPinnedPackets: 'conndrain_flowpin_pinned_packets',
  flowpinErrors: 'conndrain_flowpin_errors_total',
  ipvsSloppyTcp: 'conndrain_ipvs_sloppy_tcp',
  eventsDropped: 'conndrain_events_dropped_total',
  endpointsTracked: 'conndrain_endpoints_tracked',
  endpointsDraining: 'conndrain_endpoints_draining',
  endpointFlushes: 'conndrain_endpoint_flushes_total',
  endpointGoneChecks: 'conndrain_endpoint_gone_checks_total',
  endpointsRead: 'conndrain_endpoints_read_total',
  restartSweepDeleted: 'conndrain_restart_sweep_deleted_total',
  staleViewDeferrals: 'conndrain_stale_view_deferrals_total',
} as const;

export const ALL_METRIC_NAMES: readonly string[] = [...Object.values(WEBHOOK_METRICS), ...Object.values(AGENT_METRICS)];
