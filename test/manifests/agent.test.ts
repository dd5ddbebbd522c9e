import { readFileSync } from 'node:fs';
/**
 * The agent DaemonSet as rendered: NET_ADMIN and nothing else, host network, state on the
 * node, the downward API, every taint tolerated, a careful rolling update.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AGENT_OPTIONS } from '../../src/config/agent.js';
import { WEBHOOK_OPTIONS } from '../../src/config/webhook.js';
import { parseDurationMs } from '../../src/duration.js';
import { AGENT_NAMESPACE } from '../../src/contract.js';
import { intOption, parseArgs, stringOption } from './cli-args.js';
import { AGENT_DAEMONSET, daemonSet, onlyContainer, podSpecOf, resolvePort } from './objects.js';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import { checkPodSecurity } from './pod-security.js';
import { KUBECTL_MISSING, pick, renderAll } from './render.js';

const WEBHOOK_OPTIONS_MAX_DURATION_MS = durationMs(WEBHOOK_OPTIONS.maxDuration.default);

function durationMs(text: string): number {
  const parsed = parseDurationMs(text);
  if (!parsed.ok) throw new Error(`bad default duration ${text}`);
  return parsed.value;
}

/** Whether the scheduler may place the pod on a node with these labels (nodeSelector and required node affinity; taints aside). */
function schedulable(pod: IPodSpec, labels: Record<string, string>): boolean {
  const bySelector = Object.entries(pod.nodeSelector ?? {}).every(([k, v]) => labels[k] === v);
  const terms = pod.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  // Terms are ORed, the expressions of a term ANDed; NotIn holds for an absent label.
  const byAffinity = terms === undefined || terms.some((term) => (term.matchExpressions ?? []).every((e) => {
    const value = labels[e.key];
    if (e.operator === 'NotIn') return value === undefined || !(e.values ?? []).includes(value);
    if (e.operator === 'In') return value !== undefined && (e.values ?? []).includes(value);
    if (e.operator === 'Exists') return value !== undefined;
    if (e.operator === 'DoesNotExist') return value === undefined;
    throw new Error(`operator ${e.operator} not handled here`);
  }));
  return bySelector && byAffinity;
}

describe('agent', { skip: KUBECTL_MISSING }, () => {
  for (const [path, objects] of renderAll()) {
    describe(path, () => {
      const workload = daemonSet(objects, AGENT_DAEMONSET);
      const pod = podSpecOf(workload);
      const container = onlyContainer(workload);
      const sc = container.securityContext;
      const args = parseArgs(container.args ?? [], AGENT_OPTIONS);

      it('runs on Linux nodes only (conntrack and IPVS are Linux kernel state)', () => {
        assert.equal(pod.nodeSelector?.['kubernetes.io/os'], 'linux');
      });

      it('adds NET_ADMIN and no other capability, drops ALL, is not privileged and cannot escalate', () => {
        assert.deepEqual(sc?.capabilities?.add, ['NET_ADMIN']);
        assert.deepEqual(sc?.capabilities?.drop, ['ALL']);
        assert.equal(sc?.privileged, false);
        assert.equal(sc?.allowPrivilegeEscalation, false);
        assert.equal(sc?.readOnlyRootFilesystem, true);
        assert.equal(sc?.procMount, undefined);
        assert.notEqual((sc?.seccompProfile ?? pod.securityContext?.seccompProfile)?.type, 'Unconfined');
        assert.equal(pod.hostPID, undefined);
        assert.equal(pod.hostIPC, undefined);
        assert.equal(pod.initContainers, undefined);
      });

      it('fails Pod Security baseline for exactly the reasons the namespace label documents', () => {
        // The checker must be able to fail: the agent is the pod it has to reject.
        const reasons = checkPodSecurity(pod, 'baseline').map((v) => v.split(':')[0]);
        assert.deepEqual([...new Set(reasons)].sort(), ['capabilities', 'host namespaces', 'hostPath volumes']);
        assert.equal(workload.metadata?.namespace, AGENT_NAMESPACE);
        const namespace = pick(objects, 'Namespace', AGENT_NAMESPACE);
        assert.equal(namespace.metadata.labels?.['pod-security.kubernetes.io/enforce'], 'privileged');
      });

      it('runs on the host network with cluster DNS', () => {
        assert.equal(pod.hostNetwork, true);
        assert.equal(pod.dnsPolicy, 'ClusterFirstWithHostNet');
      });

      it('keeps its state file on a hostPath that survives restarts', () => {
        const stateFile = stringOption(args, AGENT_OPTIONS.stateFile) ?? '';
        const mount = container.volumeMounts?.find((m) => stateFile.startsWith(`${m.mountPath}/`));
        assert.ok(mount !== undefined, `no mount holds ${stateFile}`);
        assert.notEqual(mount.readOnly, true);
        const volume = pod.volumes?.find((v) => v.name === mount.name);
        assert.deepEqual(volume?.hostPath, { path: '/var/lib/conndrain', type: 'DirectoryOrCreate' });
      });

      it('reads NODE_NAME and POD_NAMESPACE from the downward API', () => {
        const env = new Map((container.env ?? []).map((e) => [e.name, e.valueFrom?.fieldRef?.fieldPath]));
        assert.equal(env.get(AGENT_OPTIONS.nodeName.env), 'spec.nodeName');
        assert.equal(env.get(AGENT_OPTIONS.podNamespace.env), 'metadata.namespace');
      });

      it('sizes V8 for its memory limit: small semi-spaces, old space capped below the limit (docs/scale.md)', () => {
        const options = (container.env ?? []).find((e) => e.name === 'NODE_OPTIONS')?.value ?? '';
        const flag = (name: string): number => Number(new RegExp(`--${name}=(\\d+)`).exec(options)?.[1] ?? NaN);
        assert.ok(flag('max-semi-space-size') <= 2, `semi-spaces of at most 2 MiB: ${options}`);
        const limitMi = Number(/^(\d+)Mi$/.exec(String(container.resources?.limits?.memory))?.[1] ?? NaN);
        assert.ok(flag('max-old-space-size') <= limitMi - 96, `old space ${flag('max-old-space-size')} MiB leaves ~96 MiB of the ${limitMi}Mi limit for the rest of the process`);
      });

      it('runs the image\'s entrypoint with a small V8 heap growing factor (a flag NODE_OPTIONS refuses)', () => {
        const entrypoint = JSON.parse(/^ENTRYPOINT (\[.*\])$/m.exec(readFileSync(new URL('../../images/agent.Dockerfile', import.meta.url), 'utf8'))?.[1] ?? '[]') as string[];
        const command = container.command ?? [];
        assert.equal(command[0], entrypoint[0], 'node, as the image runs it');
        assert.equal(command[command.length - 1], entrypoint[entrypoint.length - 1], 'the image\'s launcher');
        const growing = Number(/^--heap-growing-percent=(\d+)$/.exec(command.find((c) => c.startsWith('--heap-growing-percent')) ?? '')?.[1] ?? NaN);
        assert.ok(growing >= 10 && growing <= 50, `--heap-growing-percent ${growing}`);
        const options = (container.env ?? []).find((e) => e.name === 'NODE_OPTIONS')?.value ?? '';
        assert.equal(options.includes('heap-growing'), false, 'NODE_OPTIONS refuses it: node would not start');
      });

      it('tolerates every taint (control-plane nodes included) and runs at system-node-critical priority', () => {
        assert.deepEqual(pod.tolerations, [{ operator: 'Exists' }]);
        assert.equal(pod.priorityClassName, 'system-node-critical');
      });

      it('leaves out nodes where it cannot run (virtual-kubelet, EKS Fargate), keeps every other node', () => {
        assert.equal(pod.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution, undefined);
        const nodes: Array<[string, Record<string, string>, boolean]> = [
          ['an ordinary node', { 'kubernetes.io/os': 'linux', 'kubernetes.io/hostname': 'n1' }, true],
          ['a control-plane node', { 'kubernetes.io/os': 'linux', 'node-role.kubernetes.io/control-plane': '' }, true],
          ['an EKS managed node', { 'kubernetes.io/os': 'linux', 'eks.amazonaws.com/compute-type': 'ec2' }, true],
          ['a node labelled type=worker', { 'kubernetes.io/os': 'linux', type: 'worker' }, true],
          ['a virtual-kubelet node', { 'kubernetes.io/os': 'linux', type: 'virtual-kubelet' }, false],
          ['an EKS Fargate node', { 'kubernetes.io/os': 'linux', 'eks.amazonaws.com/compute-type': 'fargate' }, false],
          ['a Windows node', { 'kubernetes.io/os': 'windows' }, false],
        ];
        for (const [what, labels, expected] of nodes) assert.equal(schedulable(pod, labels), expected, what);
      });

      it('ships a ResourceQuota covering its priority class (clusters that limit system classes)', () => {
        const quotas = objects.filter((o) => o.kind === 'ResourceQuota') as unknown as { spec: { scopeSelector?: { matchExpressions?: { scopeName: string; operator: string; values?: string[] }[] } } }[];
        const covers = quotas.some((q) => (q.spec.scopeSelector?.matchExpressions ?? []).some((e) => e.scopeName === 'PriorityClass' && e.operator === 'In' && (e.values ?? []).includes(pod.priorityClassName ?? '')));
        assert.ok(covers);
      });

      it('rolls by surging a new agent next to the old one on each node, never leaving a node without one (zero-gap handover)', () => {
        const rolling = workload.spec?.updateStrategy?.rollingUpdate;
        assert.equal(workload.spec?.updateStrategy?.type, 'RollingUpdate');
        assert.equal(rolling?.maxUnavailable, 0);
        assert.ok((workload.spec?.minReadySeconds ?? 0) >= 5, 'each new agent proves itself before the old one goes');
        // One node at a time, unless components/rollout-fast (a percentage, its API cost in its README) is in.
        if (path === 'manifests/overlays/rollout-fast') assert.equal(rolling?.maxSurge, '10%');
        else assert.equal(rolling?.maxSurge, 1);
      });

      it('gives SIGTERM a grace period that covers the longest drain (webhook --max-duration) plus time to exit', () => {
        assert.ok((pod.terminationGracePeriodSeconds ?? 30) * 1000 > WEBHOOK_OPTIONS_MAX_DURATION_MS, `${pod.terminationGracePeriodSeconds} s`);
      });

      it('probes /healthz and /readyz on --metrics-port', () => {
        const metricsPort = intOption(args, AGENT_OPTIONS.metricsPort);
        for (const [probe, path] of [[container.livenessProbe, '/healthz'], [container.readinessProbe, '/readyz']] as const) {
          assert.equal(probe?.httpGet?.path, path);
          assert.equal(resolvePort(container, probe?.httpGet?.port), metricsPort);
          assert.equal(probe?.httpGet?.scheme ?? 'HTTP', 'HTTP');
        }
      });

      it('declares no port: on the host network each would be a host port and block the surge pod of a rollout', () => {
        assert.deepEqual(container.ports ?? [], []);
        assert.ok(intOption(args, AGENT_OPTIONS.drainPort) !== undefined && intOption(args, AGENT_OPTIONS.metricsPort) !== undefined, 'the ports are flags instead');
      });

      it('sets requests and a memory limit', () => {
        assert.ok(container.resources?.requests?.cpu !== undefined && container.resources.requests.memory !== undefined);
        assert.ok(container.resources?.limits?.memory !== undefined);
        assert.equal(container.resources?.limits?.cpu, undefined, 'a CPU limit would throttle hold re-assertion');
      });
    });
  }
});
