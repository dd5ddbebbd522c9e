/**
 * Bytes the stand-in wrote to its clients, by resource and by client, so a bench can compare
 * what one kind of client receives with another (an agent: its pods, slices and namespaces;
 * a kube-proxy: every slice and Service). A client is named by its `User-Agent` header (`-`
 * when it sends none): a bench gives each process its own. `list` counts list bodies and a
 * streaming list's initial events; `watch` the watch events after them (bookmarks and errors
 * included).
 */
import { RESOURCE_NAMES, type Resource } from './resources.js';

export interface ByteCounts {
  list: number;
  watch: number;
  /** Lists answered (plain and streaming). */
  lists: number;
  /** Watches opened (streaming lists included). */
  watches: number;
}

export interface ByteStatsSnapshot {
  total: number;
  byResource: Record<Resource, ByteCounts>;
  byClient: Record<string, Partial<Record<Resource, ByteCounts>>>;
}

const zero = (): ByteCounts => ({ list: 0, watch: 0, lists: 0, watches: 0 });

export class ByteStats {
  private readonly clients = new Map<string, Map<Resource, ByteCounts>>();

  /** The counters of one client's traffic on one resource (created at first use). */
  counts(client: string, resource: Resource): ByteCounts {
    let byResource = this.clients.get(client);
    if (byResource === undefined) this.clients.set(client, (byResource = new Map<Resource, ByteCounts>()));
    let counts = byResource.get(resource);
    if (counts === undefined) byResource.set(resource, (counts = zero()));
    return counts;
  }

  reset(): void {
    this.clients.clear();
  }

  snapshot(): ByteStatsSnapshot {
    const byResource = Object.fromEntries(RESOURCE_NAMES.map((r) => [r, zero()])) as Record<Resource, ByteCounts>;
    const byClient: ByteStatsSnapshot['byClient'] = {};
    let total = 0;
    for (const [client, resources] of this.clients) {
      const mine: Partial<Record<Resource, ByteCounts>> = {};
      for (const [resource, c] of resources) {
        mine[resource] = { ...c };
        const sum = byResource[resource];
        sum.list += c.list;
        sum.watch += c.watch;
        sum.lists += c.lists;
        sum.watches += c.watches;
        total += c.list + c.watch;
      }
      byClient[client] = mine;
    }
    return { total, byResource, byClient };
  }
}
