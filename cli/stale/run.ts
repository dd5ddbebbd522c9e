/** The body of `conndrain conntrack stale` (cli/commands/stale.ts loads it in its action). */
import { excludePodIps, formatEndpoint, groupByService, OwnershipIndex, planDeletion, type StaleGroup } from '../../src/stale/index.js';
import type { DeleteCountsByProtocol } from 'netlink-native/types';
import { CliExit } from '../exit.js';
import { openConntrack, type ConntrackHandle } from '../native-conntrack.js';
import { ApiUnavailable, loadInventory, type StaleInventory } from './inventory.js';
import { scanStale, summarizeStale, type StaleScan } from './scan.js';

export interface StaleFlags {
  netns?: string;
  endpoints?: string;
  kubeconfig?: string;
  context?: string;
  nodeName?: string;
  delete?: boolean;
  json?: boolean;
}

/** `who`: the command as the user typed it (`conndrain conntrack stale`, `kubectl conndrain stale`), for its messages. */
export async function runStale(flags: StaleFlags, who = 'conndrain conntrack stale'): Promise<void> {
  let inventory: StaleInventory;
  try {
    const env = process.env;
    inventory = await loadInventory({
      endpoints: flags.endpoints,
      kubeconfig: flags.kubeconfig ?? env.KUBECONFIG,
      context: flags.context,
      home: env.HOME,
      serviceHost: env.KUBERNETES_SERVICE_HOST,
      servicePort: env.KUBERNETES_SERVICE_PORT,
      nodeName: flags.nodeName ?? env.NODE_NAME,
    });
  } catch (error) {
    throw new CliExit(error instanceof ApiUnavailable ? 1 : 2, `${who}: ${message(error)}`);
  }
  // With no EndpointSlice every NAT'ed entry looks stale: listing them is harmless, deleting
  // them all is not (a cluster always has at least the API server's own slice).
  if (flags.delete === true && inventory.slices.length === 0) {
    throw new CliExit(2, `${who}: no EndpointSlice in ${inventory.source}: --delete would delete every NAT'ed entry; refused`);
  }
  const ownership = new OwnershipIndex();
  ownership.replaceAll(inventory.slices);
  let api: ConntrackHandle;
  try {
    api = await openConntrack(flags.netns);
  } catch (error) {
    // Operational (docs/cli-errors.md): the namespace or the addon, not the command line.
    throw new CliExit(1, `${who}: ${message(error)}`);
  }
  try {
    let scan = await scanStale(api, ownership, inventory.podIps);
    scan = await excludeLivePods(scan, ownership, inventory);
    const outcome = flags.delete === true ? await deleteStale(api, scan, ownership, inventory) : undefined;
    printResult(flags, inventory, scan, outcome);
    if (outcome !== undefined && (outcome.failed > 0 || outcome.remaining > 0)) throw new CliExit(1);
  } finally {
    api.close();
  }
}

/** With the API: addresses a live pod elsewhere holds are not stale either. */
async function excludeLivePods(scan: StaleScan, ownership: OwnershipIndex, inventory: StaleInventory): Promise<StaleScan> {
  if (inventory.livePodHolders === undefined || scan.classification.stale.length === 0) return scan;
  const targets = [...new Set(scan.classification.stale.map((e) => e.target.address))];
  const held = await inventory.livePodHolders(targets);
  if (held.size === 0) return scan;
  for (const ip of held) inventory.podIps.add(ip);
  const classification = excludePodIps(scan.classification, held);
  return { ...scan, classification, groups: groupByService(classification.stale, ownership) };
}

interface DeleteOutcome {
  requested: number;
  deleted: number;
  alreadyGone: number;
  failed: number;
  byProtocol: Record<string, DeleteCountsByProtocol>;
  remaining: number;
}

async function deleteStale(api: ConntrackHandle, scan: StaleScan, ownership: OwnershipIndex, inventory: StaleInventory): Promise<DeleteOutcome> {
  const plan = planDeletion(scan.classification.stale, new Set(scan.classification.stale.map((e) => e.key)));
  if (plan.covered.length === 0) return { requested: 0, deleted: 0, alreadyGone: 0, failed: 0, byProtocol: {}, remaining: 0 };
  const result = await api.deleteConntrackEntries(plan.covered.map((e) => e.ref));
  // Verify: never trust a count (lab-notes). A deleted entry (same key and id) still present is reported.
  const after = await scanStale(api, ownership, inventory.podIps);
  const covered = new Set(plan.covered.map((e) => `${e.key}|${e.ref.id ?? ''}`));
  const remaining = after.classification.stale.filter((e) => covered.has(`${e.key}|${e.ref.id ?? ''}`)).length;
  return { requested: plan.covered.length, deleted: result.deleted, alreadyGone: result.alreadyGone, failed: result.failed, byProtocol: result.byProtocol, remaining };
}

function printResult(flags: StaleFlags, inventory: StaleInventory, scan: StaleScan, outcome: DeleteOutcome | undefined): void {
  const { byProtocol } = summarizeStale(scan.groups);
  if (flags.json === true) {
    const body = {
      netns: flags.netns ?? null,
      source: inventory.source,
      scanned: scan.classification.scanned,
      listMs: Math.round(scan.listMs),
      classifyMs: Math.round(scan.classifyMs),
      counts: scan.classification.counts,
      byProtocol,
      groups: scan.groups.map((g) => ({ ...g, serviceName: g.serviceName ?? null, entries: g.entries.map(({ key: _key, service: _service, ...rest }) => ({ ...rest, state: rest.state ?? null })) })),
      delete: outcome ?? null,
    };
    process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
    return;
  }
  const where = flags.netns === undefined ? '' : ` in netns ${flags.netns}`;
  const lines = [`scanned ${scan.classification.scanned} entries${where} (dump ${Math.round(scan.listMs)} ms, classify ${Math.round(scan.classifyMs)} ms) against ${inventory.slices.length} EndpointSlices from ${inventory.source}`];
  for (const group of scan.groups) lines.push(...formatGroup(group));
  const total = scan.classification.counts.stale;
  const protocols = Object.entries(byProtocol).map(([p, n]) => `${p}=${n}`).join(' ');
  lines.push(`${total} stale entr${total === 1 ? 'y' : 'ies'}${total > 0 ? ` (${protocols})` : ''}.`);
  if (outcome === undefined) {
    if (total > 0) lines.push('Dry run: nothing deleted. --delete removes them.');
  } else {
    lines.push(`deleted ${outcome.deleted} of ${outcome.requested} (already gone ${outcome.alreadyGone}, failed ${outcome.failed}, still present ${outcome.remaining}).`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

function formatGroup(group: StaleGroup): string[] {
  const name = group.serviceName === undefined ? '' : ` (${group.serviceName})`;
  const head = `${group.service.protocol} ${formatEndpoint(group.service.address, group.service.port)}${name}: ${group.entries.length} stale`;
  return [head, ...group.entries.map((e) => `  ${formatEndpoint(e.client.address, e.client.port)} -> ${formatEndpoint(e.target.address, e.target.port)}  ${e.state ?? '-'}  expires in ${e.timeout}s${e.zone === 0 ? '' : `  zone ${e.zone}`}`)];
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
