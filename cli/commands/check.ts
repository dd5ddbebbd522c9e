import { Option, type Command } from 'commander';
import { AGENT_NAMESPACE, SYSTEM_NAMESPACE } from '../../src/contract.js';
import type { CheckFlags } from '../check/run.js';

const CHECKS = `
Checks, one line each (ok, FAIL with its fix, info):
  webhook.configuration   the MutatingWebhookConfiguration exists and calls a Service
  webhook.ca-bundle       each webhook's caBundle verifies the serving certificate (the Secret's
                          tls.crt: chain, validity, the Service's DNS name)
  webhook.endpoints       the webhook's Service has ready endpoints (EndpointSlices)
  agent.nodes             a ready agent on every node the DaemonSet selects; the others named
  versions                webhook, agent and this CLI are one release
  namespaces.opted-in     namespaces labelled conndrain.io/inject=enabled, pods managed (info)

--json prints { "ok": bool, "version", "namespace", "agentNamespace", "checks": [ { "id", "status", "summary", "fix"?, "details"? } ] }.
Exit code: 0 every check passed, 1 a check failed or the API server cannot be reached, 2 bad usage.`;

/** `kubectl conndrain check` (and `conndrain check`): options and action. */
export function defineCheckCommand(check: Command): void {
  check
    .addOption(new Option('--kubeconfig <file>', 'kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)'))
    .addOption(new Option('--context <name>', 'kubeconfig context (default: the current one)'))
    .addOption(new Option('-n, --namespace <name>', 'namespace of the webhook (its Deployment, Service and serving Secret)').default(SYSTEM_NAMESPACE))
    .addOption(new Option('--agent-namespace <name>', 'namespace of the agent DaemonSet').default(AGENT_NAMESPACE))
    .addOption(new Option('--webhook-configuration <name>', 'the MutatingWebhookConfiguration').default('conndrain'))
    .addOption(new Option('--tls-secret <name>', 'the Secret holding the webhook\'s serving pair (cert-manager\'s Certificate writes it)').default('conndrain-webhook-tls'))
    .addOption(new Option('--json', 'machine-readable output'))
    .addHelpText('after', CHECKS)
    .action(async (flags: CheckFlags) => {
      const { runCheck } = await import('../check/run.js');
      await runCheck(flags);
    });
}
