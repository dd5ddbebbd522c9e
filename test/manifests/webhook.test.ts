/**
 * The webhook as rendered: Pod Security restricted, the MutatingWebhookConfiguration's
 * contract, the PKI whose DNS names match the Service, the Secret at the cert dir.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WEBHOOK_OPTIONS } from '../../src/config/webhook.js';
import { AGENT_NAMESPACE, NAMESPACE_INJECT_LABEL, NAMESPACE_INJECT_VALUE, SYSTEM_NAMESPACE } from '../../src/contract.js';
import { parseDurationMs } from '../../src/duration.js';
import { intOption, parseArgs, stringOption } from './cli-args.js';
import { deployment, onlyContainer, podSpecOf, resolvePort, service, WEBHOOK_CERTIFICATE, WEBHOOK_CONFIGURATION, WEBHOOK_DEPLOYMENT, WEBHOOK_SERVICE, webhookConfiguration } from './objects.js';
import { checkPodSecurity } from './pod-security.js';
import { KUBECTL_MISSING, pick, renderAll } from './render.js';

interface CertificateSpec {
  dnsNames?: string[];
  secretName: string;
  isCA?: boolean;
  duration?: string;
  renewBefore?: string;
  privateKey?: { rotationPolicy?: string };
  issuerRef: { name: string; kind?: string };
}

/** Go duration ("2160h", "90m") in hours, for the few forms the certificates use. */
function hours(duration: string | undefined): number {
  const match = /^(\d+)h$/.exec(duration ?? '');
  if (match?.[1] === undefined) throw new Error(`unexpected duration ${String(duration)}`);
  return Number(match[1]);
}

describe('webhook', { skip: KUBECTL_MISSING }, () => {
  for (const [path, objects] of renderAll()) {
    describe(path, () => {
      const workload = deployment(objects, WEBHOOK_DEPLOYMENT);
      const pod = podSpecOf(workload);
      const container = onlyContainer(workload);
      const args = parseArgs(container.args ?? [], WEBHOOK_OPTIONS);
      // components/self-signed: the webhook makes its own certificate, no cert-manager.
      const selfSigned = args.flags.get('tls-mode') === 'self-signed';
      const flagOr = (flag: string, fallback: string): string => args.flags.get(flag) ?? fallback;

      it('meets Pod Security restricted', () => {
        assert.deepEqual(checkPodSecurity(pod, 'restricted'), []);
        assert.equal(container.securityContext?.readOnlyRootFilesystem, true);
        assert.equal(container.securityContext?.privileged, false);
      });

      it('runs 2 replicas on different nodes, guarded by a PodDisruptionBudget', () => {
        assert.equal(workload.spec?.replicas, 2);
        const spread = pod.topologySpreadConstraints?.find((c) => c.topologyKey === 'kubernetes.io/hostname');
        assert.equal(spread?.maxSkew, 1);
        assert.deepEqual(spread?.labelSelector?.matchLabels, workload.spec?.selector.matchLabels);
        const pdb = pick(objects, 'PodDisruptionBudget', WEBHOOK_DEPLOYMENT) as unknown as { spec: { minAvailable: number; selector: { matchLabels: Record<string, string> } } };
        assert.equal(pdb.spec.minAvailable, 1);
        assert.deepEqual(pdb.spec.selector.matchLabels, workload.spec?.selector.matchLabels);
        assert.equal(workload.spec?.strategy?.rollingUpdate?.maxUnavailable, 0);
      });

      it('runs on Linux nodes only', () => {
        assert.equal(pod.nodeSelector?.['kubernetes.io/os'], 'linux');
      });

      if (!selfSigned) it('gets no API access: no token, no binding', () => {
        assert.equal(pod.automountServiceAccountToken, false);
        const account = pick(objects, 'ServiceAccount', pod.serviceAccountName ?? '') as unknown as { automountServiceAccountToken?: boolean };
        assert.equal(account.automountServiceAccountToken, false);
        const bindings = objects.filter((o) => o.kind === 'RoleBinding' || o.kind === 'ClusterRoleBinding');
        const bound = bindings.filter((b) => ((b.subjects ?? []) as { name: string }[]).some((s) => s.name === pod.serviceAccountName));
        assert.deepEqual(bound, []);
      });

      it('probes /healthz and /readyz over HTTPS on the serving port, with resources set', () => {
        assert.equal(container.livenessProbe?.httpGet?.path, '/healthz');
        assert.equal(container.readinessProbe?.httpGet?.path, '/readyz');
        for (const probe of [container.livenessProbe, container.readinessProbe]) assert.equal(probe?.httpGet?.scheme, 'HTTPS');
        assert.ok(container.resources?.requests?.cpu !== undefined && container.resources.requests.memory !== undefined);
        assert.ok(container.resources?.limits?.memory !== undefined);
      });

      it('gives the shutdown sequence its time: grace period covers --shutdown-delay + --shutdown-timeout', () => {
        const seconds = (spec: typeof WEBHOOK_OPTIONS.shutdownDelay | typeof WEBHOOK_OPTIONS.shutdownTimeout): number => {
          const parsed = parseDurationMs(stringOption(args, spec) ?? '');
          assert.ok(parsed.ok, `--${spec.flag}`);
          return parsed.value / 1000;
        };
        const delay = seconds(WEBHOOK_OPTIONS.shutdownDelay);
        const timeout = seconds(WEBHOOK_OPTIONS.shutdownTimeout);
        assert.ok(delay > 0, 'a propagation delay: /readyz 503 while the endpoint removal spreads');
        assert.ok((pod.terminationGracePeriodSeconds ?? 30) >= delay + timeout, `grace ${String(pod.terminationGracePeriodSeconds)} s < ${delay} + ${timeout} s`);
      });

      it('caps connections per replica and has a memory limit to hold the cap against', () => {
        const cap = intOption(args, WEBHOOK_OPTIONS.maxConnections);
        assert.ok(cap >= 16 && cap <= 1024, `--max-connections ${cap}`);
        assert.match(String(container.resources?.limits?.memory), /^\d+Mi$/);
      });

      if (selfSigned) it('self-signed mode: a token, and only the grants for its Secret and caBundle', () => {
        assert.equal(pod.automountServiceAccountToken, true);
        const subject = { kind: 'ServiceAccount', name: pod.serviceAccountName, namespace: workload.metadata?.namespace };
        const bindings = objects.filter((o) => (o.kind === 'RoleBinding' || o.kind === 'ClusterRoleBinding') && ((o.subjects ?? []) as Array<typeof subject>).some((x) => x.name === subject.name && x.namespace === subject.namespace));
        const rules = bindings.flatMap((b) => {
          const ref = b.roleRef as { kind: string; name: string };
          const role = objects.find((o) => o.kind === ref.kind && o.metadata.name === ref.name && (ref.kind === 'ClusterRole' || o.metadata.namespace === b.metadata.namespace));
          return ((role?.rules ?? []) as { apiGroups: string[]; resources: string[]; verbs: string[]; resourceNames?: string[] }[]).map((r) => ({ ...r, scope: `${ref.kind}:${role?.metadata.namespace ?? ''}` }));
        });
        const grants = rules.flatMap((r) => r.resources.flatMap((res) => r.verbs.map((v) => `${r.scope} ${r.apiGroups.join()}/${res}:${v}=${(r.resourceNames ?? ['*']).join()}`))).sort();
        const ns = workload.metadata?.namespace ?? '';
        const secret = flagOr('tls-secret', WEBHOOK_OPTIONS.tlsSecret.default);
        const configName = flagOr('webhook-configuration', WEBHOOK_OPTIONS.webhookConfiguration.default);
        assert.deepEqual(grants, [
          `ClusterRole: admissionregistration.k8s.io/mutatingwebhookconfigurations:get=${configName}`,
          `ClusterRole: admissionregistration.k8s.io/mutatingwebhookconfigurations:patch=${configName}`,
          `Role:${ns} /secrets:create=*`,
          `Role:${ns} /secrets:get=${secret}`,
          `Role:${ns} /secrets:update=${secret}`,
        ]);
        assert.deepEqual(objects.filter((o) => o.apiVersion.startsWith('cert-manager.io/')).map((o) => o.metadata.name), [], 'no cert-manager object');
      });

      if (selfSigned) it('self-signed mode: writes the pair to an in-memory emptyDir at --cert-dir, names its own Service and webhook configuration', () => {
        const mount = container.volumeMounts?.find((m) => m.mountPath === stringOption(args, WEBHOOK_OPTIONS.certDir));
        const volume = pod.volumes?.find((v) => v.name === mount?.name);
        assert.equal(volume?.emptyDir?.medium, 'Memory');
        assert.notEqual(mount?.readOnly, true);
        const svc = service(objects, WEBHOOK_SERVICE);
        assert.equal(flagOr('service-name', WEBHOOK_OPTIONS.serviceName.default), svc.metadata?.name);
        assert.equal(container.env?.find((e) => e.name === WEBHOOK_OPTIONS.namespace.env)?.valueFrom?.fieldRef?.fieldPath, 'metadata.namespace');
        assert.equal(flagOr('webhook-configuration', WEBHOOK_OPTIONS.webhookConfiguration.default), WEBHOOK_CONFIGURATION);
        assert.equal(objects.some((o) => o.kind === 'NetworkPolicy'), false, 'the webhook must reach the API server');
      });

      if (!selfSigned) it('mounts the serving Secret, whole and read-only, at --cert-dir', () => {
        const certificate = pick(objects, 'Certificate', WEBHOOK_CERTIFICATE).spec as CertificateSpec;
        const volume = pod.volumes?.find((v) => v.secret?.secretName === certificate.secretName);
        assert.ok(volume !== undefined, `no volume from Secret ${certificate.secretName}`);
        const mount = container.volumeMounts?.find((m) => m.name === volume.name);
        assert.equal(mount?.mountPath, stringOption(args, WEBHOOK_OPTIONS.certDir));
        assert.equal(mount?.readOnly, true);
        assert.equal(mount?.subPath, undefined, 'a subPath mount never sees renewals');
      });

      if (!selfSigned) it('serves a certificate whose DNS names are exactly the Service in-cluster names', () => {
        const svc = service(objects, WEBHOOK_SERVICE);
        const name = svc.metadata?.name ?? '';
        const ns = svc.metadata?.namespace ?? '';
        const certificate = pick(objects, 'Certificate', WEBHOOK_CERTIFICATE).spec as CertificateSpec;
        assert.deepEqual([...(certificate.dnsNames ?? [])].sort(), [name, `${name}.${ns}`, `${name}.${ns}.svc`, `${name}.${ns}.svc.cluster.local`].sort());
      });

      if (!selfSigned) it('rotates the serving certificate ahead of expiry, with a new key, from a CA issuer', () => {
        const serving = pick(objects, 'Certificate', WEBHOOK_CERTIFICATE).spec as CertificateSpec;
        assert.ok(hours(serving.renewBefore) < hours(serving.duration));
        assert.ok(hours(serving.renewBefore) >= hours(serving.duration) / 4, 'renew with at least a quarter of the lifetime left');
        assert.equal(serving.privateKey?.rotationPolicy, 'Always');
        const issuer = pick(objects, 'Issuer', serving.issuerRef.name).spec as { ca?: { secretName: string } };
        const ca = objects.filter((o) => o.kind === 'Certificate').map((o) => o.spec as CertificateSpec).find((c) => c.secretName === issuer.ca?.secretName);
        assert.equal(ca?.isCA, true);
        const bootstrap = pick(objects, 'Issuer', ca?.issuerRef.name ?? '').spec as { selfSigned?: object };
        assert.ok(bootstrap.selfSigned !== undefined, 'the CA is signed by the self-signed bootstrap issuer');
      });

      const policies = objects.filter((o) => o.kind === 'NetworkPolicy') as unknown as { spec: { podSelector: { matchLabels?: Record<string, string> }; policyTypes: string[]; ingress?: { from?: unknown[]; ports?: { port: number | string }[] }[]; egress?: unknown[] } }[];
      if (policies.length > 0) it('is reachable on its port only and reaches nothing (NetworkPolicy)', () => {
        const labels = workload.spec?.template.metadata?.labels ?? {};
        const selecting = policies.filter((p) => Object.entries(p.spec.podSelector.matchLabels ?? {}).every(([k, v]) => labels[k] === v));
        assert.equal(selecting.length, 1);
        const policy = selecting[0];
        assert.deepEqual([...(policy?.spec.policyTypes ?? [])].sort(), ['Egress', 'Ingress']);
        assert.deepEqual(policy?.spec.egress, []);
        const ports = (policy?.spec.ingress ?? []).flatMap((rule) => (rule.ports ?? []).map((p) => resolvePort(container, p.port)));
        assert.deepEqual(ports, [Number(args.flags.get('port') ?? WEBHOOK_OPTIONS.port.default)]);
      });

      describe('MutatingWebhookConfiguration', () => {
        const config = webhookConfiguration(objects, WEBHOOK_CONFIGURATION);
        const svc = service(objects, WEBHOOK_SERVICE);

        if (selfSigned) it('self-signed mode: no cainjector annotation (the webhook sets its caBundle)', () => {
          assert.equal(config.metadata?.annotations?.['cert-manager.io/inject-ca-from'], undefined);
        });

        if (!selfSigned) it('takes its caBundle from the serving certificate (cert-manager cainjector)', () => {
          const certificate = pick(objects, 'Certificate', WEBHOOK_CERTIFICATE);
          assert.equal(config.metadata?.annotations?.['cert-manager.io/inject-ca-from'], `${certificate.metadata.namespace ?? ''}/${certificate.metadata.name}`);
        });

        it('points every webhook at the Service port and /mutate', () => {
          const servicePort = svc.spec?.ports?.[0];
          const targetPort = servicePort?.targetPort;
          assert.equal(typeof targetPort === 'string' ? container.ports?.find((p) => p.name === targetPort)?.containerPort : targetPort, Number(args.flags.get('port') ?? WEBHOOK_OPTIONS.port.default));
          for (const hook of config.webhooks ?? []) {
            assert.equal(hook.clientConfig.service?.name, svc.metadata?.name);
            assert.equal(hook.clientConfig.service?.namespace, svc.metadata?.namespace);
            assert.equal(hook.clientConfig.service?.port, servicePort?.port);
            assert.equal(hook.clientConfig.service?.path, '/mutate');
          }
        });

        it('selects opted-in namespaces only, never kube-system or its own two', () => {
          for (const hook of config.webhooks ?? []) {
            const expressions = hook.namespaceSelector?.matchExpressions ?? [];
            assert.deepEqual(expressions.find((e) => e.key === NAMESPACE_INJECT_LABEL), { key: NAMESPACE_INJECT_LABEL, operator: 'In', values: [NAMESPACE_INJECT_VALUE] });
            const exclusion = expressions.find((e) => e.key === 'kubernetes.io/metadata.name');
            assert.equal(exclusion?.operator, 'NotIn');
            assert.deepEqual([...(exclusion?.values ?? [])].sort(), ['kube-system', SYSTEM_NAMESPACE, AGENT_NAMESPACE].sort());
            assert.equal(hook.namespaceSelector?.matchLabels, undefined);
          }
        });

        it('mutates pods on CREATE with the agreed settings', () => {
          const pods = config.webhooks?.find((h) => h.name === 'pods.conndrain.io');
          assert.ok(pods !== undefined);
          assert.deepEqual(pods.rules, [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'], scope: 'Namespaced' }]);
          assert.deepEqual(pods.admissionReviewVersions, ['v1']);
          assert.equal(pods.sideEffects, 'None');
          assert.equal(pods.reinvocationPolicy, 'IfNeeded');
          assert.equal(pods.matchPolicy, 'Equivalent');
          assert.ok(['Ignore', 'Fail'].includes(pods.failurePolicy ?? ''), 'failurePolicy must be set explicitly');
          // Fail only with a webhook that stays scheduled (components/failure-policy-fail).
          if (pods.failurePolicy === 'Fail') assert.equal(pod.priorityClassName, 'system-cluster-critical');
          assert.ok((pods.timeoutSeconds ?? 10) <= 10);
        });

        it('checks workload templates on CREATE and UPDATE, warnings only, never blocking; not ReplicaSets (their warnings reach no one)', () => {
          const workloads = config.webhooks?.find((h) => h.name === 'workloads.conndrain.io');
          assert.ok(workloads !== undefined);
          const covered = (workloads.rules ?? []).flatMap((r) => (r.resources ?? []).map((res) => `${(r.apiGroups ?? [])[0] ?? ''}/${(r.apiVersions ?? [])[0] ?? ''}/${res}:${(r.operations ?? []).join('+')}`));
          assert.deepEqual(covered.sort(), ['apps/v1/daemonsets', 'apps/v1/deployments', 'apps/v1/statefulsets', 'batch/v1/cronjobs', 'batch/v1/jobs'].map((r) => `${r}:CREATE+UPDATE`));
          assert.equal(workloads.failurePolicy, 'Ignore');
          assert.equal(workloads.sideEffects, 'None');
          assert.deepEqual(workloads.admissionReviewVersions, ['v1']);
        });
      });
    });
  }
});
