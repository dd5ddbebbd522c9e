/**
 * The hold's edits of IPVS: held servers to weight 0 (one batch), a server the proxy deleted
 * re-added at its original weight then edited to 0, and a hold's release (Ready again: the
 * original weight back; gone: only a server the agent re-created is deleted).
 */
import type { Logger } from 'pino';
import type { IpvsApi, IpvsService } from 'netlink-native/types';
import type { AddressIndex } from './address-index.js';
import { formatServiceKey, sameDestinationKey } from 'netlink-native/ipvs-keys';
import { holdLogLevel, type HeldServer, type RestoreAction } from './held-server.js';
import { isCode } from './netlink-code.js';

export interface HoldEditsContext {
  ipvs: IpvsApi;
  logger: Logger;
  /** A held server the proxy reset (`weight`) or deleted (`readd`) was restored. */
  restored?: (action: RestoreAction, held: HeldServer) => void;
}

/**
 * Edits held servers to weight 0, all in one setDestinationWeights call (the addon: one worker
 * round trip for thousands of servers). `restore` says why an already-held server is edited
 * again (logged, counted). New holds are logged by the caller, one line per pod (HoldReport).
 */
export async function setZeros(ctx: HoldEditsContext, items: ReadonlyArray<{ held: HeldServer; restore: RestoreAction | undefined }>): Promise<Array<'done' | 'missing' | 'failed'>> {
  if (items.length === 0) return [];
  const { logger } = ctx;
  let results: Array<Error | undefined>;
  try {
    results = await ctx.ipvs.setDestinationWeights(items.map(({ held }) => ({ service: held.service, destination: held.destination, weight: 0 })));
  } catch (error) {
    if (isCode(error, 'EIPVSUNAVAILABLE')) throw error;
    const pods = [...new Set(items.map(({ held }) => held.podKey))];
    logger.warn({ pods, err: error, servers: items.length }, 'ipvs: could not set weight 0; retried next interval');
    return items.map(() => 'failed');
  }
  return items.map(({ held, restore }, i) => {
    const error = results[i];
    if (error === undefined) {
      if (restore !== undefined) {
        logger.info({ pod: held.podKey, ip: held.destination.address, service: formatServiceKey(held.service) }, 'ipvs: the proxy reset a held server\'s weight; back to 0');
        ctx.restored?.(restore, held);
      }
      return 'done';
    }
    if (isCode(error, 'ENOENT', 'ESRCH')) return 'missing';
    logger.warn({ pod: held.podKey, ip: held.destination.address, err: error, service: formatServiceKey(held.service) }, 'ipvs: could not set weight 0; retried next interval');
    return 'failed';
  });
}

/** A held server the proxy deleted: re-added at its original weight, then edited to 0 (the Maglev table rebuilt as before). */
export async function readd(ctx: HoldEditsContext, held: HeldServer, service: IpvsService): Promise<void> {
  const { ipvs, logger } = ctx;
  const log = logger.child({ pod: held.podKey, ip: held.destination.address });
  try {
    await ipvs.addDestination(service.key, { ...held.spec, weight: held.originalWeight });
    held.recreated = true;
    await ipvs.setDestinationWeight(service.key, held.destination, 0);
    log.info({ service: formatServiceKey(held.service), scheduler: service.scheduler, originalWeight: held.originalWeight }, 'ipvs: the proxy deleted a held server; re-added at its original weight and edited to 0');
    ctx.restored?.('readd', held);
  } catch (error) {
    if (isCode(error, 'EEXIST')) return; // the proxy re-added it meanwhile: next pass edits it
    log.warn({ err: error, service: formatServiceKey(held.service) }, 'ipvs: could not re-add a held server; retried next interval');
  }
}

/** Releases one hold (`serving`: Ready again; `gone`); false when it failed and is retried next interval. */
export async function release(ctx: HoldEditsContext, index: AddressIndex, held: HeldServer, why: 'serving' | 'gone'): Promise<boolean> {
  const { ipvs, logger } = ctx;
  const log = logger.child({ pod: held.podKey, ip: held.destination.address });
  try {
    if (why === 'gone' && held.recreated) {
      await ipvs.deleteDestination(held.service, held.destination);
      log[holdLogLevel(held)]({ service: formatServiceKey(held.service) }, 'ipvs: pod gone; removed the server the agent had re-created');
    } else if (why === 'serving') {
      const current = (await ipvs.listDestinations(held.service)).find((d) => sameDestinationKey(d, held.destination));
      if (current !== undefined && current.weight === 0) await ipvs.setDestinationWeight(held.service, held.destination, held.originalWeight);
      if (current !== undefined) index.rememberWeight(held, current.weight === 0 ? held.originalWeight : current.weight);
      log[holdLogLevel(held)]({ service: formatServiceKey(held.service), weight: held.originalWeight }, 'ipvs: pod Ready again; original weight back, hold released');
    } else {
      log[holdLogLevel(held)]({ service: formatServiceKey(held.service) }, 'ipvs: pod gone; hold released, server left as the proxy left it');
    }
  } catch (error) {
    if (!isCode(error, 'ENOENT', 'ESRCH')) {
      log.warn({ err: error, service: formatServiceKey(held.service) }, 'ipvs: release failed; retried next interval');
      return false;
    }
  }
  return true;
}
