/**
 * `conndrain agent --cleanup`: removes everything flow pinning ever put on this node, then the
 * agent exits. Every twin named in conndrain's table registry and every IPVS fwmark service
 * inside conndrain's reserved mark range is deleted, then the whole `inet conndrain` table.
 * (Flows pinned through a twin on this node lose their IPVS connection entries' server: use
 * it when uninstalling, not while pods drain.)
 */
import type { Logger } from 'pino';
import type { IpvsApi } from 'netlink-native/types';
import { formatMark, inRange, type FwmarkRange } from '../../../src/flowpin/fwmark-range.js';
import { buildDeleteTable, parseRegistry } from '../../../src/flowpin/nft-ruleset.js';
import { isCode } from '../netlink-code.js';
import type { NftApi } from './nft.js';

export interface CleanupReport {
  twinsDeleted: number[];
  tableRemoved: boolean;
  ipvsAvailable: boolean;
}

export async function cleanupFlowpin(options: { ipvs: IpvsApi; nft: NftApi; range: FwmarkRange; logger: Logger }): Promise<CleanupReport> {
  const { ipvs, nft, range, logger } = options;
  const listing = await nft.listTable();
  const registered = parseRegistry(listing);
  const marks = new Map<number, 4 | 6>();
  for (const entry of registered) marks.set(entry.fwmark, entry.original.family);
  let ipvsAvailable = true;
  try {
    for (const service of await ipvs.listServices()) {
      const mark = service.key.fwmark;
      if (mark !== undefined && (inRange(range, mark) || marks.has(mark))) marks.set(mark, service.key.family);
    }
  } catch (error) {
    if (!isCode(error, 'EIPVSUNAVAILABLE')) throw error;
    ipvsAvailable = false;
  }
  const twinsDeleted: number[] = [];
  if (ipvsAvailable) {
    for (const [fwmark, family] of [...marks].sort(([a], [b]) => a - b)) {
      try {
        await ipvs.deleteService({ family, fwmark });
        twinsDeleted.push(fwmark);
        logger.info({ fwmark: formatMark(fwmark), family }, 'cleanup: twin IPVS service deleted');
      } catch (error) {
        if (!isCode(error, 'ESRCH', 'ENOENT')) throw error;
      }
    }
  }
  await nft.apply(buildDeleteTable());
  if (listing !== undefined) logger.info('cleanup: nftables table inet conndrain removed');
  return { twinsDeleted, tableRemoved: listing !== undefined, ipvsAvailable };
}
