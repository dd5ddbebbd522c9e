/**
 * Every kustomization under manifests/ renders with the real `kubectl kustomize`, and every
 * object it emits validates against the real schemas (kubernetes-models,
 * @kubernetes-models/cert-manager, @kubernetes-models/prometheus-operator) with no field
 * its Kubernetes type does not declare.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findKustomizations, KUBECTL_MISSING, nameOf, render, renderAll, type KubeObject } from './render.js';
import { MODELS, unknownFields, validateAgainstSchema } from './schemas.js';

const skip = KUBECTL_MISSING;

describe('kustomizations', { skip }, () => {
  const all = findKustomizations();

  it('finds the default install, the overlays and the components', () => {
    const paths = all.map((k) => k.path);
    for (const expected of ['manifests', 'manifests/base', 'manifests/overlays/production', 'manifests/components/alerts']) {
      assert.ok(paths.includes(expected), `${expected} missing from ${paths.join(', ')}`);
    }
  });

  for (const [path, objects] of renderAll()) {
    describe(path, () => {
      it('renders objects', () => {
        assert.ok(objects.length > 0, `${path} rendered nothing`);
      });
      it('names every object once', () => {
        const keys = objects.map((o) => `${o.apiVersion} ${nameOf(o)}`);
        assert.deepEqual(keys.filter((k, i) => keys.indexOf(k) !== i), []);
      });
      it('validates every object against its schema', () => {
        const problems = objects.flatMap((o) => validateAgainstSchema(o).map((p) => `${nameOf(o)}: ${p}`));
        assert.deepEqual(problems, []);
      });
      it('uses no field its Kubernetes type does not declare (strict field validation)', () => {
        const problems = objects.flatMap((o) => unknownFields(o).map((p) => `${nameOf(o)}: ${p}`));
        assert.deepEqual(problems, []);
      });
    });
  }

  it('renders every component through at least one kustomization', () => {
    const used = new Set(all.flatMap((k) => {
      const components = (k.spec.components ?? []) as string[];
      return components.map((c) => new URL(c, `file:///${k.path}/`).pathname.slice(1));
    }));
    const unused = all.filter((k) => k.kind === 'Component' && !used.has(k.path)).map((k) => k.path);
    assert.deepEqual(unused, []);
  });

  it('knows a schema for every kind shipped (no object escapes validation)', () => {
    const kinds = new Set(renderAll().flatMap(([, objects]) => objects.map((o) => `${o.apiVersion}/${o.kind}`)));
    assert.deepEqual([...kinds].filter((k) => !MODELS.has(k)), []);
  });
});

describe('the validators reject what the API server would', () => {
  const good = (): KubeObject => structuredClone(render('manifests/base').find((o) => o.kind === 'Deployment') as KubeObject);

  it('a type error', { skip }, () => {
    const bad = good();
    (bad.spec as Record<string, unknown>).replicas = 'two';
    assert.match(validateAgainstSchema(bad).join('\n'), /replicas must be integer/);
  });

  it('an unknown field, with its path', { skip }, () => {
    const bad = good();
    const template = (bad.spec as { template: { spec: { containers: Record<string, unknown>[] } } }).template;
    (template.spec.containers[0] as Record<string, unknown>).securityContex = {};
    assert.deepEqual(unknownFields(bad), ['Deployment.spec.template.spec.containers[0].securityContex: unknown field']);
  });

  it('an unknown field in a CRD (cert-manager, Prometheus Operator), but not in a map', () => {
    const certificate: KubeObject = {
      apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'x', labels: { anything: 'goes' } },
      spec: { secretName: 's', dnsName: ['a'], issuerRef: { name: 'i', knd: 'Issuer' } },
    };
    assert.deepEqual(unknownFields(certificate), ['Certificate.spec.dnsName: unknown field', 'Certificate.spec.issuerRef.knd: unknown field']);
    const monitor: KubeObject = {
      apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor', metadata: { name: 'x' },
      spec: { selector: { matchLabels: { a: 'b' } }, endpoints: [{ port: 'm', tlsConfig: { serverNme: 'x' } }] },
    };
    assert.deepEqual(unknownFields(monitor), ['ServiceMonitor.spec.endpoints[0].tlsConfig.serverNme: unknown field']);
  });

  it('a cert-manager enum value', () => {
    const certificate: KubeObject = {
      apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'x' },
      spec: { secretName: 's', issuerRef: { name: 'i' }, privateKey: { rotationPolicy: 'Sometimes' } },
    };
    assert.match(validateAgainstSchema(certificate).join('\n'), /rotationPolicy must be equal to one of the allowed values/);
  });

  it('a PrometheusRule rule without expr', () => {
    const rule: KubeObject = { apiVersion: 'monitoring.coreos.com/v1', kind: 'PrometheusRule', metadata: { name: 'x' }, spec: { groups: [{ name: 'g', rules: [{ alert: 'A' }] }] } };
    assert.match(validateAgainstSchema(rule).join('\n'), /must have required property expr/);
  });

  it('an unknown kind', () => {
    assert.deepEqual(validateAgainstSchema({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }), ['no schema known for example.com/v1 Widget']);
  });
});
