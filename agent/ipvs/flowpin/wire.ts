/**
 * How the agent plugs flow pinning in (agent/agent.ts calls these two next to the IPVS hold):
 * the hold must never hold servers of conndrain's twin services (their draining pods keep
 * their original weight on purpose), and the controller runs on the hold's interval with the
 * hold's list as input, only where IPVS is available and --flow-pinning is on.
 */
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { NativeNetlink } from 'netlink-native';
import type { IpvsApi, IpvsServiceKey } from 'netlink-native/types';
import type { AgentConfig } from '../../../src/config/agent.js';
import { inRange } from '../../../src/flowpin/fwmark-range.js';
import type { HeldRef } from '../../../src/flowpin/types.js';
import type { Clock } from '../../../time/clock.js';
import { FlowpinController } from './controller.js';
import { createNft, type NftApi } from './nft.js';

/** The hold's skipService: twins (fwmark services in conndrain's range) are never held. */
export function flowpinSkip(config: Pick<AgentConfig, 'fwmarkRange'>): (key: IpvsServiceKey) => boolean {
  return (key) => key.fwmark !== undefined && inRange(config.fwmarkRange, key.fwmark);
}

export interface AgentFlowpinDeps {
  config: Pick<AgentConfig, 'flowPinning' | 'ipvsHold' | 'fwmarkRange' | 'holdIntervalMs'>;
  ipvs: IpvsApi;
  logger: Logger;
  held: () => readonly HeldRef[];
  optOutPodUids?: () => ReadonlySet<string>;
  clock?: Clock;
  registry?: Registry;
  /** nftables; the real `nft` by default, and only when `ipvs` is the real addon. */
  nft?: NftApi;
}

/** The controller, or undefined when flow pinning is off (--flow-pinning=false or --ipvs-hold=false). */
export function createAgentFlowpin(deps: AgentFlowpinDeps): FlowpinController | undefined {
  const { config } = deps;
  if (!config.flowPinning || !config.ipvsHold) {
    deps.logger.info({ flowPinning: config.flowPinning, ipvsHold: config.ipvsHold }, 'flow pinning off');
    return undefined;
  }
  // An agent built on the in-memory IPVS stand-in (unit tests) must not program the host's
  // real nftables: without an nft stand-in given, flow pinning stays off there.
  if (deps.nft === undefined && !(deps.ipvs instanceof NativeNetlink)) {
    deps.logger.info('flow pinning off: IPVS is not the netlink addon (a stand-in) and no nftables stand-in was given');
    return undefined;
  }
  return new FlowpinController({
    ipvs: deps.ipvs, nft: deps.nft ?? createNft(), range: config.fwmarkRange, logger: deps.logger, held: deps.held,
    optOutPodUids: deps.optOutPodUids, clock: deps.clock, intervalMs: config.holdIntervalMs, registry: deps.registry,
  });
}
