/**
 * The body of `conndrain agent --cleanup` (cli/commands/agent.ts branches here): opens netlink and
 * nft on this node, removes every conndrain nftables table and twin IPVS service, prints what
 * it did, and ends the process through CliExit (0: done; 1: something could not be removed).
 */
import { cleanupFlowpin } from '../../agent/ipvs/flowpin/cleanup.js';
import { createNft } from '../../agent/ipvs/flowpin/nft.js';
import { formatMark, type FwmarkRange } from '../../src/flowpin/fwmark-range.js';
import { createLogger } from '../../log/logger.js';
import { CliExit } from '../exit.js';

export async function runFlowpinCleanup(config: { fwmarkRange: FwmarkRange; logLevel: string }): Promise<never> {
  const logger = createLogger({ level: config.logLevel, component: 'agent-cleanup' });
  let netlink;
  try {
    const { openNetlink } = await import('netlink-native');
    netlink = openNetlink();
  } catch (error) {
    throw new CliExit(1, `conndrain agent --cleanup: cannot open netlink (needs the netlink-native addon and NET_ADMIN): ${(error as Error).message}`);
  }
  try {
    const report = await cleanupFlowpin({ ipvs: netlink, nft: createNft(), range: config.fwmarkRange, logger });
    const twins = report.twinsDeleted.map(formatMark).join(', ') || 'none';
    throw new CliExit(0, `conndrain agent --cleanup: twin IPVS services deleted: ${twins}; nftables table inet conndrain ${report.tableRemoved ? 'removed' : 'was absent'}${report.ipvsAvailable ? '' : ' (IPVS not available on this node)'}`);
  } catch (error) {
    if (error instanceof CliExit) throw error;
    throw new CliExit(1, `conndrain agent --cleanup failed: ${(error as Error).message}`);
  } finally {
    netlink.close();
  }
}
