import { Option, type Command } from 'commander';
import { addKubeFlags } from '../kube-flags.js';
import type { StaleFlags } from '../stale/run.js';

const JSON_SHAPE = `
--json prints one object:
  { "netns": string|null, "source": string, "scanned": number, "listMs": number, "classifyMs": number,
    "counts": { "not-nat": n, "owned": n, "pod-ip": n, "stale": n },
    "byProtocol": { "<protocol>": n },
    "groups": [ { "service": { "protocol", "address", "port" }, "serviceName": string|null,
                  "entries": [ { "protocol", "family", "zone", "state", "timeout",
                                 "client": { "address", "port" }, "target": { "address", "port" } } ] } ],
    "delete": null | { "requested": n, "deleted": n, "alreadyGone": n, "failed": n,
                       "byProtocol": { "<protocol>": { "deleted", "alreadyGone", "failed" } },
                       "remaining": n } }
"listMs" is the scan call (one dump pass, filtered in C); "classifyMs" the JavaScript time spent on the
candidates, most of it during the dump pass (they come over in batches while it runs), plus grouping.
--delete deletes exactly the stale entries listed: each by its original tuple, zone and the kernel's
entry id (a newer flow reusing a tuple is left alone and counted as already gone).
Exit code: 0 done (stale entries found or not), 1 a delete failed or left a covered entry, 2 bad input.`;

/** `conndrain conntrack stale` and `kubectl conndrain stale`: options and action. */
export function defineStaleCommand(stale: Command): void {
  stale
    .addOption(new Option('--netns <name>', 'network namespace (under /var/run/netns) to scan; this one when absent'))
    .addOption(new Option('--endpoints <file>', 'EndpointSlices (and optionally Pods) from a file: JSON or YAML, e.g. `kubectl get endpointslices,pods -A -o yaml`').conflicts(['kubeconfig', 'context']));
  addKubeFlags(stale, {
    kubeconfig: 'read EndpointSlices from the API server (in-cluster when neither flag is given and it runs in a pod)',
    context: 'the kubeconfig context to read them with (default: its current-context; the kubeconfig defaults to $KUBECONFIG, else ~/.kube/config)',
  });
  stale
    .addOption(new Option('--node-name <name>', 'this node\'s name: its pods\' IPs are never stale (hostPort DNAT); default $NODE_NAME'))
    .addOption(new Option('--delete', 'delete exactly the stale entries (by original tuple, zone and entry id)'))
    .addOption(new Option('--json', 'machine-readable output'))
    .addHelpText('after', JSON_SHAPE)
    .action(async (flags: StaleFlags, command: Command) => {
      const [{ runStale }, { pathOf }] = await Promise.all([import('../stale/run.js'), import('../usage-error.js')]);
      await runStale(flags, pathOf(command));
    });
}

