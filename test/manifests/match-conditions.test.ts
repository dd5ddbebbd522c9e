/**
 * Which requests reach the webhook: the matchConditions of the rendered
 * MutatingWebhookConfiguration evaluated by a CEL implementation (@marcbachmann/cel-js) on
 * sample AdmissionRequests, and its objectSelector on conndrain's own pods. The API server
 * itself (its CEL environment, its cost estimate) does not run here: the expressions use only
 * what both implement (has, in, exists, startsWith, the conditional operator).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { evaluate } from '@marcbachmann/cel-js';
import type { IMutatingWebhook } from 'kubernetes-models/admissionregistration.k8s.io/v1/MutatingWebhook';
import { ANNOTATION_DRAIN, ANNOTATION_HOOK } from '../../src/contract.js';
import { WEBHOOK_CONFIGURATION, webhookConfiguration } from './objects.js';
import { KUBECTL_MISSING, nameOf, render, renderAll } from './render.js';

type Json = Record<string, unknown>;
type LabelSelector = IMutatingWebhook['objectSelector'];

interface Sample {
  what: string;
  kind: string;
  object: Json;
  username?: string;
  expected: boolean;
}

function hook(name: string): IMutatingWebhook {
  const found = webhookConfiguration(render('manifests/base'), WEBHOOK_CONFIGURATION).webhooks?.find((h) => h.name === name);
  if (found === undefined) throw new Error(`no webhook ${name}`);
  return found;
}

/** True when every condition holds, as the API server decides whether to call the webhook; throws on an evaluation error. */
function reaches(webhook: IMutatingWebhook, sample: Sample): boolean {
  const request = { kind: { group: '', version: 'v1', kind: sample.kind }, operation: 'CREATE', userInfo: { username: sample.username ?? 'jane@example.com', groups: ['system:authenticated'] } };
  return (webhook.matchConditions ?? []).every((condition) => {
    const result: unknown = evaluate(condition.expression, { object: sample.object, oldObject: null, request });
    assert.equal(typeof result, 'boolean', `${condition.name} must evaluate to a bool`);
    return result === true;
  });
}

const pod = (metadata: Json): Json => ({ apiVersion: 'v1', kind: 'Pod', metadata: { generateName: 'web-', ...metadata }, spec: { containers: [{ name: 'app', image: 'app:1' }] } });
const template = (metadata: Json): Json => ({ metadata, spec: { containers: [{ name: 'app', image: 'app:1' }] } });

const POD_SAMPLES: Sample[] = [
  { what: 'opted in', kind: 'Pod', object: pod({ annotations: { [ANNOTATION_DRAIN]: '30s' } }), expected: true },
  { what: 'opted in among other annotations', kind: 'Pod', object: pod({ annotations: { 'prometheus.io/scrape': 'true', [ANNOTATION_DRAIN]: 'true' }, labels: { app: 'web' } }), expected: true },
  { what: 'a misspelt opt-in (warned about)', kind: 'Pod', object: pod({ annotations: { 'conndrain.io/drian': '30s' } }), expected: true },
  { what: 'the opt-in written as a label (warned about)', kind: 'Pod', object: pod({ labels: { [ANNOTATION_DRAIN]: 'true' } }), expected: true },
  { what: 'no annotations, no labels', kind: 'Pod', object: pod({}), expected: false },
  { what: 'empty annotations', kind: 'Pod', object: pod({ annotations: {}, labels: {} }), expected: false },
  { what: 'other annotations only', kind: 'Pod', object: pod({ annotations: { 'example.com/conndrain.io': 'x', 'kubectl.kubernetes.io/restartedAt': 'now' }, labels: { app: 'web' } }), expected: false },
];

const WORKLOAD_SAMPLES: Sample[] = [
  { what: 'a Deployment whose template opted in', kind: 'Deployment', object: { spec: { template: template({ annotations: { [ANNOTATION_DRAIN]: '30s' } }) } }, expected: true },
  { what: 'a Deployment with a misspelt template key', kind: 'Deployment', object: { spec: { template: template({ annotations: { 'conndrain.io/hok': 'agent' } }) } }, expected: true },
  { what: 'a Deployment with the opt-in as a template label', kind: 'Deployment', object: { spec: { template: template({ labels: { [ANNOTATION_DRAIN]: 'true' } }) } }, expected: true },
  { what: 'a Deployment that did not opt in', kind: 'Deployment', object: { spec: { template: template({ labels: { app: 'web' } }) } }, expected: false },
  { what: 'a Deployment whose conndrain key is on the Deployment, not its template', kind: 'Deployment', object: { metadata: { annotations: { [ANNOTATION_DRAIN]: '30s' } }, spec: { template: template({}) } }, expected: false },
  { what: 'a StatefulSet with no spec yet (not validated before admission)', kind: 'StatefulSet', object: {}, expected: false },
  { what: 'a Job with a template without metadata', kind: 'Job', object: { spec: { template: { spec: {} } } }, expected: false },
  { what: 'a CronJob whose job template opted in', kind: 'CronJob', object: { spec: { jobTemplate: { spec: { template: template({ annotations: { [ANNOTATION_HOOK]: 'sleep', [ANNOTATION_DRAIN]: '10s' } }) } } } }, expected: true },
  { what: 'a CronJob without a job template', kind: 'CronJob', object: { spec: { schedule: '* * * * *' } }, expected: false },
  { what: 'a Job the CronJob controller creates', kind: 'Job', username: 'system:serviceaccount:kube-system:cronjob-controller', object: { spec: { template: template({ annotations: { [ANNOTATION_DRAIN]: '30s' } }) } }, expected: false },
  { what: 'a Deployment the controller manager updates', kind: 'Deployment', username: 'system:kube-controller-manager', object: { spec: { template: template({ annotations: { [ANNOTATION_DRAIN]: '30s' } }) } }, expected: false },
  { what: 'a Deployment a GitOps tool applies', kind: 'Deployment', username: 'system:serviceaccount:argocd:argocd-application-controller', object: { spec: { template: template({ annotations: { [ANNOTATION_DRAIN]: '30s' } }) } }, expected: true },
];

/** A label selector's matchLabels and matchExpressions over a set of labels, as the API server applies them. */
function selects(selector: LabelSelector, labels: Record<string, string>): boolean {
  if (selector === undefined) return true;
  const byLabels = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  const byExpressions = (selector.matchExpressions ?? []).every((e) => {
    const has = Object.hasOwn(labels, e.key);
    switch (e.operator) {
      case 'In': return has && (e.values ?? []).includes(labels[e.key] ?? '');
      case 'NotIn': return !has || !(e.values ?? []).includes(labels[e.key] ?? '');
      case 'Exists': return has;
      case 'DoesNotExist': return !has;
      default: throw new Error(`unknown operator ${e.operator}`);
    }
  });
  return byLabels && byExpressions;
}

describe('which requests reach the webhook', { skip: KUBECTL_MISSING }, () => {
  describe('pods.conndrain.io: only pods that carry a conndrain.io/ key', () => {
    for (const sample of POD_SAMPLES) {
      it(`${sample.expected ? 'reaches' : 'skips'}: ${sample.what}`, () => assert.equal(reaches(hook('pods.conndrain.io'), sample), sample.expected));
    }
  });

  describe('workloads.conndrain.io: only templates that carry a conndrain.io/ key, never a controller\'s request', () => {
    for (const sample of WORKLOAD_SAMPLES) {
      it(`${sample.expected ? 'reaches' : 'skips'}: ${sample.what}`, () => assert.equal(reaches(hook('workloads.conndrain.io'), sample), sample.expected));
    }
  });

  it('the checks can fail: an unguarded expression errors on a pod without annotations', () => {
    assert.throws(() => evaluate(`'${ANNOTATION_DRAIN}' in object.metadata.annotations`, { object: pod({}) }));
    assert.equal(evaluate(`has(object.metadata.annotations) && '${ANNOTATION_DRAIN}' in object.metadata.annotations`, { object: pod({}) }), false);
  });

  for (const [path, objects] of renderAll()) {
    it(`${path}: every webhook has the same conditions and leaves out every pod conndrain itself runs`, () => {
      const config = webhookConfiguration(objects, WEBHOOK_CONFIGURATION);
      for (const webhook of config.webhooks ?? []) {
        assert.deepEqual(webhook.matchConditions, hook(webhook.name).matchConditions, webhook.name);
        assert.ok((webhook.matchConditions ?? []).length > 0, `${webhook.name} has matchConditions`);
        for (const workload of objects.filter((o) => ['Deployment', 'DaemonSet', 'StatefulSet', 'Job'].includes(o.kind))) {
          const labels = (workload as unknown as { spec: { template: { metadata?: { labels?: Record<string, string> } } } }).spec.template.metadata?.labels ?? {};
          assert.equal(selects(webhook.objectSelector, labels), false, `${webhook.name} would be called for the pods of ${nameOf(workload)}`);
          assert.equal(selects(webhook.objectSelector, workload.metadata.labels ?? {}), false, `${webhook.name} would be called for ${nameOf(workload)}`);
        }
        assert.equal(selects(webhook.objectSelector, { app: 'web', 'app.kubernetes.io/name': 'web' }), true, 'an application pod is selected');
      }
    });
  }
});
