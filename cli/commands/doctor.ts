import { Option, type Command } from 'commander';
import type { DoctorFlags } from '../doctor/run.js';

/** The agent's probes port (plain HTTP on loopback); its /metrics needs a reviewed token (--metrics-secure). */
const DEFAULT_AGENT_URL = 'http://127.0.0.1:9903';

const HELP = `
Checks (one line each: value, problem or not, why):
  conntrack.fill                    nf_conntrack_count/nf_conntrack_max (a problem from 75%)
  conntrack.insert_failed|drop|early_drop   per-CPU counters of /proc/net/stat/nf_conntrack
  sysctl.nf_conntrack_tcp_timeout_established, sysctl.nf_conntrack_udp_timeout, sysctl.nf_conntrack_udp_timeout_stream
  ipvs                              present | absent (absent is not a problem: IPVS checks skipped)
  ipvs.expire_nodest_conn, ipvs.sloppy_tcp, ipvs.conn_reuse_mode, ipvs.expire_quiescent_template
  flows.visibility                  conntrack | unknown (eBPF datapath: Cilium or Calico eBPF links, eBPF load-balancer maps
                                    pinned under /sys/fs/bpf/tc/globals): where unknown, adaptive drains last their maximum
  agent                             GET <agent-url>/healthz: running | unreachable (<code>) | HTTP <status>
  agent.ipvs_servers_held           conndrain_ipvs_servers_held from <agent-url>/metrics (an agent with --metrics-secure=false),
                                    else the count of <agent-url>/debug/holds
  conntrack.stale                   NAT'ed entries no endpoint owns (needs --endpoints)

--json prints one object:
  { "netns": string|null, "problems": number,
    "findings": [ { "check": string, "value": number|string|null, "problem": boolean, "why": string } ] }
Exit code: 0 no problem found, 1 at least one problem, 2 the doctor could not run.`;

/** `conndrain doctor`: a node's conntrack and IPVS settings, the agent, and ghost entries, judged. */
export function defineDoctorCommand(doctor: Command): void {
  doctor
    .addOption(new Option('--netns <name>', 'check this network namespace (under /var/run/netns) instead of the current one'))
    .addOption(new Option('--json', 'machine-readable output'))
    .addOption(new Option('--agent-url <url>', 'the agent\'s probes address (/healthz, /debug/holds)').default(DEFAULT_AGENT_URL))
    .addOption(new Option('--no-agent', 'do not check the agent'))
    .addOption(new Option('--endpoints <file>', 'EndpointSlices (and Pods) file, to count stale entries (see `conntrack stale`)'))
    .addHelpText('after', HELP)
    .action(async (flags: DoctorFlags) => {
      const { runDoctor } = await import('../doctor/run.js');
      await runDoctor(flags);
    });
}
