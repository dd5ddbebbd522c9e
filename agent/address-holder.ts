/**
 * Who holds a pod address now: the IP-reuse check of every flush (a gone pod's entries are
 * never deleted while another pod holds its address) and of the restart sweep.
 *
 * Two sources answer: this node's pod watch (a live pod of this node) and the slices (a current
 * endpoint anywhere). They disagree for a moment after a pod of this node goes: the pod watch
 * sees the pod deleted at once, the EndpointSlice controller takes it out of its slices later.
 * For this node's pods the pod watch is the truth: a slice that still lists a pod the pod watch
 * saw go is behind, and does not make that pod a holder. Without this rule an address
 * force-deleted and reused at once, whose new pod then goes too, kept the new pod's entries
 * forever: its flush found the old pod still in a slice, and the old pod's own flush had found
 * the new pod live (`address-holder.test.ts`).
 */
export interface AddressHolderSources {
  /** A live pod of this node that holds `address` now, other than `exceptUid`: its namespace/name. */
  liveLocal: (address: string, exceptUid: string | undefined) => string | undefined;
  /** The uids of the current endpoints whose slices list `address`. */
  endpointHolders: (address: string) => readonly string[];
  /** This node's pod watch saw the pod go (deleted or gone from the list). */
  goneLocally: (uid: string) => boolean;
  /** An endpoint's namespace/name as its slices name it (for the log), when they name it. */
  endpointKey: (uid: string) => string | undefined;
}

export interface AddressHolder {
  /** Another pod than `uid` holding `address` now: its namespace/name (an endpoint's uid when its slices name none). */
  holderOf(address: string, uid: string): string | undefined;
  /** Of these addresses, those a live local pod or a current endpoint holds. */
  heldLocally(addresses: readonly string[]): Set<string>;
}

export function makeAddressHolder(sources: AddressHolderSources): AddressHolder {
  const endpointHolder = (address: string, exceptUid: string | undefined): string | undefined => {
    for (const uid of sources.endpointHolders(address)) if (uid !== exceptUid && !sources.goneLocally(uid)) return uid;
    return undefined;
  };
  return {
    holderOf: (address, uid) => {
      const local = sources.liveLocal(address, uid);
      if (local !== undefined) return local;
      const endpoint = endpointHolder(address, uid);
      return endpoint === undefined ? undefined : (sources.endpointKey(endpoint) ?? endpoint);
    },
    heldLocally: (addresses) => new Set(addresses.filter((a) => sources.liveLocal(a, undefined) !== undefined || endpointHolder(a, undefined) !== undefined)),
  };
}
