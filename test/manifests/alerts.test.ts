/**
 * The alert rules and the dashboard: every expression parses with Prometheus' grammar and
 * reads only metrics conndrain exports (src/metric-names.ts) or the standard exporters in
 * standard-metrics.ts; every alert carries severity, summary, description and runbook.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { ALL_METRIC_NAMES } from '../../src/metric-names.js';
import { analysePromql, substituteGrafanaVariables } from './promql.js';
import { KUBECTL_MISSING, MANIFESTS_DIR, pick, render } from './render.js';
import { isKnownMetric } from './standard-metrics.js';

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface RuleFile {
  spec: { groups: { name: string; rules: Rule[] }[] };
}
interface Panel {
  title: string;
  type: string;
  targets?: { expr: string }[];
  panels?: Panel[];
}
interface Dashboard {
  title: string;
  uid: string;
  panels: Panel[];
  templating: { list: { name: string; type: string; query?: string | { query: string } }[] };
}

const COMPONENTS = join(MANIFESTS_DIR, 'components');
const ruleFile = parseAllDocuments(readFileSync(join(COMPONENTS, 'alerts', 'prometheusrule.yaml'), 'utf8'))[0]?.toJS() as RuleFile;
const rules = ruleFile.spec.groups.flatMap((g) => g.rules);
const dashboard = JSON.parse(readFileSync(join(COMPONENTS, 'dashboard', 'conndrain-dashboard.json'), 'utf8')) as Dashboard;

function problemsOf(expr: string): string[] {
  const report = analysePromql(expr);
  const unknown = report.metrics.filter((m) => !isKnownMetric(m, ALL_METRIC_NAMES)).map((m) => `unknown metric ${m}`);
  return [...report.errors, ...unknown, ...(report.metrics.length === 0 ? ['reads no metric'] : [])];
}

function panelsOf(panels: Panel[]): Panel[] {
  return panels.flatMap((p) => [p, ...panelsOf(p.panels ?? [])]);
}

describe('the checks can fail', () => {
  it('a syntax error', () => {
    assert.match(problemsOf('sum by (node) (rate(conndrain_drains_total[5m])').join(), /syntax error/);
  });
  it('a metric nobody exports', () => {
    assert.deepEqual(problemsOf('rate(conndrain_drain_total[5m]) > 0'), ['unknown metric conndrain_drain_total']);
  });
  it('histogram series only of our histograms', () => {
    assert.deepEqual(problemsOf('rate(conndrain_webhook_admission_duration_seconds_bucket[5m])'), []);
    assert.deepEqual(problemsOf('rate(conndrain_drains_total_bucket[5m])'), ['unknown metric conndrain_drains_total_bucket']);
  });
});

describe('PrometheusRule', () => {
  it('covers the field failures and ours', () => {
    const names = rules.map((r) => r.alert);
    for (const expected of ['ConndrainConntrackTableFilling', 'ConndrainConntrackInsertFailed', 'ConndrainEndpointChurnHigh', 'ConndrainIpvsHoldsUndone', 'ConndrainConntrackFlushFailing', 'ConndrainIpReuseSkips', 'ConndrainWebhookErrors', 'ConndrainWebhookSlow']) {
      assert.ok(names.includes(expected), `${expected} missing`);
    }
    const filling = rules.find((r) => r.alert === 'ConndrainConntrackTableFilling');
    assert.match(filling?.expr ?? '', /conndrain_conntrack_entries\s*\/\s*conndrain_conntrack_max\)\s*>\s*0\.8/);
  });

  for (const rule of rules) {
    const name = rule.alert ?? rule.record ?? '?';
    it(`${name}: parses and reads only known metrics`, () => {
      assert.deepEqual(problemsOf(rule.expr), []);
    });
    it(`${name}: has a severity, a summary, a description and a runbook`, () => {
      assert.ok(['critical', 'warning', 'info'].includes(rule.labels?.severity ?? ''), `severity ${String(rule.labels?.severity)}`);
      for (const key of ['summary', 'description', 'runbook']) assert.ok((rule.annotations?.[key] ?? '').length > 20, `${key} missing or empty`);
    });
  }

  it('alert names are unique', () => {
    const names = rules.map((r) => r.alert);
    assert.deepEqual(names.filter((n, i) => names.indexOf(n) !== i), []);
  });

  it('is what the alerts component renders', { skip: KUBECTL_MISSING }, () => {
    const rendered = pick(render('manifests/overlays/monitoring'), 'PrometheusRule', 'conndrain') as unknown as RuleFile;
    assert.deepEqual(rendered.spec, ruleFile.spec);
  });
});

describe('Grafana dashboard', () => {
  const panels = panelsOf(dashboard.panels).filter((p) => p.type !== 'row');
  const exprs = panels.flatMap((p) => (p.targets ?? []).map((t) => [p.title, t.expr] as const));

  it('has panels for drains, holds, deleted entries, table fill and webhook latency', () => {
    const all = exprs.map(([, e]) => e).join('\n');
    for (const metric of ['conndrain_drains_active', 'conndrain_ipvs_servers_held', 'conndrain_conntrack_entries_deleted_total', 'conndrain_conntrack_max', 'conndrain_webhook_admission_duration_seconds_bucket']) {
      assert.ok(all.includes(metric), `no panel reads ${metric}`);
    }
  });

  it('every query parses and reads only known metrics', () => {
    assert.ok(exprs.length >= 10);
    const problems = exprs.flatMap(([title, expr]) => problemsOf(substituteGrafanaVariables(expr)).map((p) => `${title}: ${p}`));
    assert.deepEqual(problems, []);
  });

  it('template variables read known metrics', () => {
    for (const variable of dashboard.templating.list.filter((v) => v.type === 'query')) {
      const query = typeof variable.query === 'string' ? variable.query : variable.query?.query ?? '';
      const match = /^label_values\((\w+),\s*\w+\)$/.exec(query);
      assert.ok(match?.[1] !== undefined, `${variable.name}: unexpected query ${query}`);
      assert.ok(isKnownMetric(match[1], ALL_METRIC_NAMES), match[1]);
    }
  });

  it('ships as a ConfigMap the Grafana sidecar picks up, holding this very JSON', { skip: KUBECTL_MISSING }, () => {
    const configMap = pick(render('manifests/overlays/monitoring'), 'ConfigMap', 'conndrain-dashboard') as unknown as { metadata: { labels: Record<string, string> }; data: Record<string, string> };
    assert.equal(configMap.metadata.labels.grafana_dashboard, '1');
    assert.deepEqual(JSON.parse(configMap.data['conndrain-dashboard.json'] ?? '{}'), dashboard);
  });
});
