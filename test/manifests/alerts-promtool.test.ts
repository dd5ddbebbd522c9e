/**
 * The alert rules evaluated by Prometheus' own rule engine: `promtool check rules` on the
 * PrometheusRule's groups, then `promtool test rules` with alerts.promtool.yaml (synthetic
 * series: each alert fires where it should, with its labels and summary, and stays quiet on
 * its look-alike). promtool comes with Debian's `prometheus` package
 * (scripts/install-deps.sh); without it these tests skip and say so.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parseAllDocuments, stringify } from 'yaml';
import { MANIFESTS_DIR, REPO_ROOT } from './render.js';

interface RuleFile {
  spec: { groups: { name: string; rules: { alert?: string; annotations?: Record<string, string> }[] }[] };
}

const probe = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
const PROMTOOL_MISSING = probe.error === undefined && probe.status === 0 ? undefined : 'promtool not found (Debian package prometheus; scripts/install-deps.sh installs it)';

describe('alert rules under promtool', { skip: PROMTOOL_MISSING }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'cdprom-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const rule = parseAllDocuments(readFileSync(join(MANIFESTS_DIR, 'components/alerts/prometheusrule.yaml'), 'utf8'))[0]?.toJS() as RuleFile;

  it('promtool check rules accepts the groups as shipped', () => {
    writeFileSync(join(dir, 'shipped.yaml'), stringify({ groups: rule.spec.groups }));
    const check = spawnSync('promtool', ['check', 'rules', join(dir, 'shipped.yaml')], { encoding: 'utf8' });
    assert.equal(check.status, 0, `${check.stdout}${check.stderr}`);
    assert.match(check.stdout, /SUCCESS: \d+ rules found/);
  });

  it('every alert is exercised by alerts.promtool.yaml', () => {
    const tests = readFileSync(join(REPO_ROOT, 'test/manifests/alerts.promtool.yaml'), 'utf8');
    const tested = new Set([...tests.matchAll(/alertname:\s*(\w+)/g)].map((m) => m[1]));
    const alerts = rule.spec.groups.flatMap((g) => g.rules.map((r) => r.alert)).filter((a): a is string => a !== undefined);
    assert.deepEqual(alerts.filter((a) => !tested.has(a)), []);
  });

  it('promtool test rules: each alert fires on its series with its labels and summary, and only there', () => {
    // promtool compares annotations exactly: keep the templated summary, drop the prose.
    const groups = rule.spec.groups.map((g) => ({ ...g, rules: g.rules.map((r) => ({ ...r, annotations: { summary: r.annotations?.summary ?? '' } })) }));
    writeFileSync(join(dir, 'rules.yaml'), stringify({ groups }));
    copyFileSync(join(REPO_ROOT, 'test/manifests/alerts.promtool.yaml'), join(dir, 'alerts.promtool.yaml'));
    const test = spawnSync('promtool', ['test', 'rules', 'alerts.promtool.yaml'], { cwd: dir, encoding: 'utf8' });
    assert.equal(test.status, 0, `${test.stdout}${test.stderr}`);
    assert.match(test.stdout, /SUCCESS/);
  });
});
