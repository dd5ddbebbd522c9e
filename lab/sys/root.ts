import { run } from './exec.js';

/** Why the lab needs root, in one sentence people can act on. */
export const ROOT_REASON =
  'the lab creates network namespaces, veth pairs and nftables rules, and reads and deletes the ' +
  "kernel's conntrack entries inside them: all of that needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN).";

/** What is missing to run a lab scenario on this machine; empty when everything is there. */
export async function findLabProblems(): Promise<string[]> {
  const problems: string[] = [];
  if (typeof process.getuid === 'function' && process.getuid() !== 0) problems.push(`not root: ${ROOT_REASON}`);
  for (const tool of ['ip', 'nft', 'sysctl']) {
    try {
      await run('sh', ['-c', `command -v ${tool}`]);
    } catch {
      problems.push(`\`${tool}\` is not installed (scripts/install-deps.sh installs iproute2 and nftables)`);
    }
  }
  return problems;
}
