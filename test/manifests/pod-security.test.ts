/**
 * Pod Security admission as `kubectl apply` meets it: every pod template of every rendering
 * meets the `enforce` level of its namespace (else it is rejected) and the `warn` level (else
 * every apply prints a warning). The webhook's namespace enforces `restricted`; only the
 * agent's is `privileged`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import { AGENT_NAMESPACE, SYSTEM_NAMESPACE } from '../../src/contract.js';
import { deployment, podSpecOf, WEBHOOK_DEPLOYMENT } from './objects.js';
import { checkPodSecurity } from './pod-security.js';
import { KUBECTL_MISSING, nameOf, render, renderAll, type KubeObject } from './render.js';

const POD_TEMPLATE_KINDS = new Set(['Deployment', 'DaemonSet', 'StatefulSet', 'ReplicaSet', 'Job']);
const LEVELS = ['privileged', 'baseline', 'restricted'] as const;
type Level = (typeof LEVELS)[number];

function levelOf(namespace: KubeObject | undefined, mode: 'enforce' | 'warn' | 'audit'): Level {
  // Pod Security admission's default when a label is absent: privileged (unless configured otherwise).
  const value = namespace?.metadata.labels?.[`pod-security.kubernetes.io/${mode}`] ?? 'privileged';
  const level = LEVELS.find((l) => l === value);
  if (level === undefined) throw new Error(`namespace ${namespace?.metadata.name ?? ''}: unknown ${mode} level ${value}`);
  return level;
}

function violations(spec: IPodSpec, level: Level): string[] {
  return level === 'privileged' ? [] : checkPodSecurity(spec, level);
}

describe('Pod Security admission', { skip: KUBECTL_MISSING }, () => {
  for (const [path, objects] of renderAll()) {
    describe(path, () => {
      const namespaces = new Map(objects.filter((o) => o.kind === 'Namespace').map((o) => [o.metadata.name, o]));

      it(`${SYSTEM_NAMESPACE} enforces, audits and warns at restricted; only ${AGENT_NAMESPACE} is privileged`, () => {
        const system = namespaces.get(SYSTEM_NAMESPACE);
        for (const mode of ['enforce', 'audit', 'warn'] as const) assert.equal(levelOf(system, mode), 'restricted', mode);
        assert.equal(levelOf(namespaces.get(AGENT_NAMESPACE), 'enforce'), 'privileged');
        const privileged = [...namespaces.values()].filter((n) => levelOf(n, 'enforce') === 'privileged').map((n) => n.metadata.name);
        assert.deepEqual(privileged, [AGENT_NAMESPACE]);
      });

      it('every pod meets its namespace\'s enforce and warn levels: admitted, and no warning printed', () => {
        const problems = objects.filter((o) => POD_TEMPLATE_KINDS.has(o.kind)).flatMap((o) => {
          const namespace = namespaces.get(o.metadata.namespace ?? '');
          assert.ok(namespace !== undefined, `${nameOf(o)}: its namespace is not part of the install`);
          const spec = podSpecOf(o as unknown as Parameters<typeof podSpecOf>[0]);
          return (['enforce', 'warn'] as const).flatMap((mode) => violations(spec, levelOf(namespace, mode)).map((v) => `${nameOf(o)} (${mode} ${levelOf(namespace, mode)}): ${v}`));
        });
        assert.deepEqual(problems, []);
      });

      it(`the agent's namespace holds the agent only`, () => {
        const others = objects.filter((o) => o.metadata.namespace === AGENT_NAMESPACE && POD_TEMPLATE_KINDS.has(o.kind) && o.metadata.name !== 'conndrain-agent').map(nameOf);
        assert.deepEqual(others, []);
      });
    });
  }

  it('the check can fail: the webhook pod without its seccomp profile or with a capability would be warned about', () => {
    const spec = structuredClone(podSpecOf(deployment(render('manifests/base'), WEBHOOK_DEPLOYMENT)));
    delete spec.securityContext?.seccompProfile;
    const container = spec.containers[0];
    if (container?.securityContext !== undefined) {
      delete container.securityContext.seccompProfile;
      container.securityContext.capabilities = { add: ['NET_RAW'], drop: ['ALL'] };
      container.securityContext.allowPrivilegeEscalation = true;
    }
    assert.deepEqual(violations(spec, 'restricted').map((v) => v.split(':')[0]), ['capabilities', 'privilege escalation', 'seccomp', 'capabilities'], 'baseline refuses NET_RAW, restricted the rest');
  });
});
