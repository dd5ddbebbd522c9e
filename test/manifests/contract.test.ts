/**
 * Every conndrain.io name the manifests and the install guide use is one of the constants in
 * src/contract.ts, and everything installs into its two namespaces: the agent's objects into
 * AGENT_NAMESPACE, everything else into SYSTEM_NAMESPACE.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import * as contract from '../../src/contract.js';
import { KUBECTL_MISSING, MANIFESTS_DIR, nameOf, renderAll, type KubeObject } from './render.js';

const CONTRACT_NAMES: ReadonlySet<string> = new Set((Object.values(contract) as unknown[]).filter((v): v is string => typeof v === 'string' && v.startsWith(`${contract.DOMAIN}/`)));
const NAME_PATTERN = new RegExp(`${contract.DOMAIN.replace('.', '\\.')}/[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?`, 'g');
const CLUSTER_SCOPED = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'MutatingWebhookConfiguration']);

function unknownNames(text: string): string[] {
  return [...new Set(text.match(NAME_PATTERN) ?? [])].filter((name) => !CONTRACT_NAMES.has(name));
}

describe('contract names', () => {
  it('the contract has the names the manifests rely on', () => {
    for (const name of [contract.NAMESPACE_INJECT_LABEL, contract.ANNOTATION_INJECTED, contract.ANNOTATION_DRAIN]) assert.ok(CONTRACT_NAMES.has(name));
  });

  it('flags a name the contract does not know (the check can fail)', () => {
    assert.deepEqual(unknownNames('conndrain.io/inject: enabled, conndrain.io/drian: 30s'), ['conndrain.io/drian']);
  });

  it('manifests/README.md uses only contract names, and the Event reasons the agent records', () => {
    const readme = readFileSync(join(MANIFESTS_DIR, 'README.md'), 'utf8');
    assert.deepEqual(unknownNames(readme), []);
    for (const name of [contract.NAMESPACE_INJECT_LABEL, contract.ANNOTATION_DRAIN, contract.ANNOTATION_INJECTED, contract.EVENT_DRAIN_STARTED, contract.EVENT_DRAIN_FINISHED]) {
      assert.ok(readme.includes(name), `README does not mention ${name}`);
    }
    assert.ok(readme.includes(`${contract.NAMESPACE_INJECT_LABEL}=${contract.NAMESPACE_INJECT_VALUE}`));
  });

  describe('rendered', { skip: KUBECTL_MISSING }, () => {
    for (const [path, objects] of renderAll()) {
      it(`${path}: uses only contract names`, () => {
        assert.deepEqual(unknownNames(JSON.stringify(objects)), []);
      });
      it(`${path}: installs the agent into ${contract.AGENT_NAMESPACE}, everything else into ${contract.SYSTEM_NAMESPACE}`, () => {
        const home = (o: KubeObject): string => (o.metadata.labels?.['app.kubernetes.io/component'] === 'agent' ? contract.AGENT_NAMESPACE : contract.SYSTEM_NAMESPACE);
        const elsewhere = objects.filter((o) => !CLUSTER_SCOPED.has(o.kind) && o.metadata.namespace !== home(o)).map(nameOf);
        assert.deepEqual(elsewhere, []);
        assert.deepEqual(objects.filter((o) => o.kind === 'Namespace').map((o) => o.metadata.name).sort(), [contract.AGENT_NAMESPACE, contract.SYSTEM_NAMESPACE].sort());
      });
    }
  });
});
