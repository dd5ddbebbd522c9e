import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { AGENT_METRICS as N } from '../../src/metric-names.js';

/** The janitor's metrics, on the agent's registry. */
export class JanitorMetrics {
  readonly staleEntries: Gauge;
  readonly deleted: Counter;
  readonly livePodSkips: Counter;
  readonly scanDuration: Histogram;

  constructor(registry: Registry) {
    const registers = [registry];
    this.staleEntries = new Gauge({ name: N.staleEntries, help: 'NAT\'ed conntrack entries whose DNAT target no endpoint owns and no live pod holds, at the last janitor scan, by protocol', labelNames: ['protocol'], registers });
    this.deleted = new Counter({ name: N.staleDeleted, help: 'Stale conntrack entries the janitor deleted after the grace, by protocol', labelNames: ['protocol'], registers });
    this.livePodSkips = new Counter({ name: N.staleLivePodSkips, help: 'Stale-looking entries left alone because a live pod holds their target IP', registers });
    this.scanDuration = new Histogram({ name: N.staleScanDuration, help: 'Duration of one janitor scan (dump, classify, delete)', buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30], registers });
  }
}
