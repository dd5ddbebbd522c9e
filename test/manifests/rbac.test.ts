/** RBAC as rendered: no wildcard anywhere, no write verb except creating Events. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KUBECTL_MISSING, nameOf, pick, renderAll, type KubeObject } from './render.js';

interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

const READ_VERBS = new Set(['get', 'list', 'watch']);
/** components/self-signed (its exact grants: webhook.test.ts). */
const SELF_SIGNED_ROLES = new Set(['Role conndrain-system/conndrain-webhook-tls', 'ClusterRole conndrain-webhook-cabundle']);

function rulesOf(objects: KubeObject[]): [string, PolicyRule[]][] {
  return objects.filter((o) => o.kind === 'Role' || o.kind === 'ClusterRole').map((o) => [nameOf(o), (o.rules ?? []) as PolicyRule[]]);
}

/** Every (group, resource, verb) a rule grants, as `group/resource:verb`. */
function grants(rules: PolicyRule[]): string[] {
  return rules.flatMap((r) => (r.apiGroups ?? []).flatMap((g) => (r.resources ?? []).flatMap((res) => r.verbs.map((v) => `${g}/${res}:${v}`)))).sort();
}

describe('RBAC', { skip: KUBECTL_MISSING }, () => {
  for (const [path, objects] of renderAll()) {
    describe(path, () => {
      it('uses no wildcard and no nonResourceURLs', () => {
        for (const [name, rules] of rulesOf(objects)) {
          for (const rule of rules) {
            const fields = [...(rule.apiGroups ?? []), ...(rule.resources ?? []), ...rule.verbs, ...(rule.resourceNames ?? [])];
            assert.ok(!fields.some((f) => f.includes('*')), `${name}: wildcard in ${JSON.stringify(rule)}`);
            assert.equal(rule.nonResourceURLs, undefined, name);
          }
        }
      });

      it('writes nothing but Events (and, in self-signed mode, the webhook\'s Secret and caBundle)', () => {
        for (const [name, rules] of rulesOf(objects)) {
          if (SELF_SIGNED_ROLES.has(name)) {
            // Every rule but `create` (which RBAC cannot narrow) names its objects.
            for (const rule of rules) assert.ok(rule.verbs.every((v) => v === 'create') || (rule.resourceNames ?? []).length > 0, `${name}: ${JSON.stringify(rule)}`);
            continue;
          }
          const writes = grants(rules).filter((g) => !READ_VERBS.has(g.split(':')[1] ?? ''));
          assert.ok(writes.every((w) => w === '/events:create' || w === 'events.k8s.io/events:create'), `${name} writes ${writes.join(', ')}`);
        }
      });

      it('grants the agent exactly what it reads (its pods, EndpointSlices, Namespaces, Services) and events create', () => {
        const read = (group: string, resource: string): string[] => ['get', 'list', 'watch'].map((v) => `${group}/${resource}:${v}`);
        assert.deepEqual(grants((pick(objects, 'ClusterRole', 'conndrain-agent').rules ?? []) as PolicyRule[]), [
          '/events:create', ...read('', 'namespaces'), ...read('', 'pods'), ...read('', 'services'), ...read('discovery.k8s.io', 'endpointslices'),
        ].sort());
        const binding = pick(objects, 'ClusterRoleBinding', 'conndrain-agent') as unknown as { roleRef: { name: string }; subjects: { kind: string; name: string; namespace: string }[] };
        assert.equal(binding.roleRef.name, 'conndrain-agent');
        const daemonSet = pick(objects, 'DaemonSet', 'conndrain-agent') as unknown as { spec: { template: { spec: { serviceAccountName: string } } }; metadata: { namespace: string } };
        assert.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', name: daemonSet.spec.template.spec.serviceAccountName, namespace: daemonSet.metadata.namespace }]);
      });

      it('binds nothing else to the agent: the janitor needs no role of its own', () => {
        const daemonSet = pick(objects, 'DaemonSet', 'conndrain-agent') as unknown as { metadata: { namespace: string }; spec: { template: { spec: { serviceAccountName: string } } } };
        const subject = { kind: 'ServiceAccount', name: daemonSet.spec.template.spec.serviceAccountName, namespace: daemonSet.metadata.namespace };
        const bound = objects
          .filter((o) => (o.kind === 'ClusterRoleBinding' || o.kind === 'RoleBinding') && ((o.subjects ?? []) as Array<typeof subject>).some((x) => x.kind === subject.kind && x.name === subject.name && x.namespace === subject.namespace))
          .map(nameOf);
        assert.deepEqual(bound, ['ClusterRoleBinding conndrain-agent']);
      });

      it('binds only roles that exist', () => {
        const roles = new Set(objects.filter((o) => o.kind === 'ClusterRole' || o.kind === 'Role').map((o) => `${o.kind}/${o.metadata.name}`));
        for (const binding of objects.filter((o) => o.kind === 'ClusterRoleBinding' || o.kind === 'RoleBinding')) {
          const ref = binding.roleRef as { kind: string; name: string };
          assert.ok(roles.has(`${ref.kind}/${ref.name}`), `${nameOf(binding)} binds missing ${ref.kind}/${ref.name}`);
        }
      });
    });
  }
});
