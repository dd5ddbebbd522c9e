import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError, Option } from 'commander';
import { PROTOCOL_NUMBERS, type ConntrackEntry, type ConntrackEntryRef, type ConntrackMatch, type ConntrackProtocol, type ConntrackStats, type ConntrackTuple, type DeleteConntrackResult, type NetlinkError } from 'netlink-native/types';
import { CliExit } from '../exit.js';
import { loadNetlinkNative, type NativeModule } from '../load-native.js';
import { STALE } from '../command-listings.js';
import { defineStaleCommand } from './stale.js';

const MATCH_MODES: readonly ConntrackMatch[] = ['origSrc', 'origDst', 'replySrc', 'replyDst'];
const PROTOCOLS = Object.keys(PROTOCOL_NUMBERS) as ConntrackProtocol[];
/** What a dead pod leaves behind: service traffic DNATed to it, and traffic (also IPIP) sent to it. */
const DELETE_DEFAULT_MATCH: ConntrackMatch[] = ['replySrc', 'origDst'];

interface FilterFlags {
  netns?: string;
  address?: string[];
  match?: ConntrackMatch[];
  protocol?: ConntrackProtocol[];
  zone?: number;
  json?: boolean;
}

/** Comma lists and repeated flags both add up: `--address a,b --address c`. */
function collect<T extends string>(allowed: readonly T[] | undefined, what: string) {
  return (value: string, previous: T[] = []): T[] => {
    const items = value.split(',').map((s) => s.trim()).filter((s) => s !== '');
    for (const item of items) {
      if (allowed !== undefined && !allowed.includes(item as T)) throw new InvalidArgumentError(`${what} "${item}" is not one of ${allowed.join(', ')}`);
    }
    return [...previous, ...(items as T[])];
  };
}

function integerIn(min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < min || n > max) throw new InvalidArgumentError(`expected an integer in ${min}..${max}`);
    return n;
  };
}

function addFilterOptions(command: Command, matchHelp: string): Command {
  return command
    .addOption(new Option('--netns <name>', 'network namespace under /var/run/netns (this one when absent)'))
    .addOption(new Option('--address <ip>', 'IPv4/IPv6 address(es); repeat or comma-separate').argParser(collect(undefined, 'address')))
    .addOption(new Option('--match <modes>', `which tuple field equals an address: ${MATCH_MODES.join(',')} (${matchHelp})`).argParser(collect(MATCH_MODES, 'match mode')))
    .addOption(new Option('--protocol <names>', `only these protocols: ${PROTOCOLS.join(',')}`).argParser(collect(PROTOCOLS, 'protocol')))
    .addOption(new Option('--zone <n>', 'only this conntrack zone').argParser(integerIn(0, 65535)))
    .addOption(new Option('--json', 'machine-readable output'));
}

async function openIn(command: string, netns: string | undefined): Promise<{ native: NativeModule; api: import('netlink-native').NativeNetlink }> {
  const native = await loadNetlinkNative();
  try {
    return { native, api: native.openNetlink(netns === undefined ? {} : { netns }) };
  } catch (error) {
    throw failure(command, error);
  }
}

function failure(what: string, error: unknown): CliExit {
  const e = error as Partial<NetlinkError>;
  const code = e.code === 'EINVAL' ? 2 : 1;
  return new CliExit(code, `conndrain conntrack ${what}: ${error instanceof Error ? error.message : String(error)}`);
}

function endpoint(address: string, port: number | undefined): string {
  const host = address.includes(':') ? `[${address}]` : address;
  return port === undefined ? host : `${host}:${port}`;
}

function tupleText(t: ConntrackTuple): string {
  const icmp = t.icmpType === undefined ? '' : ` type=${t.icmpType} code=${t.icmpCode ?? 0} id=${t.icmpId ?? 0}`;
  return `${endpoint(t.src, t.srcPort)} -> ${endpoint(t.dst, t.dstPort)}${icmp}`;
}

export function formatEntry(e: ConntrackEntry): string {
  const parts = [
    `${e.protocol}/ipv${e.family}`,
    e.state ?? '-',
    `${e.timeout}s`,
    tupleText(e.original),
    `reply ${tupleText(e.reply)}`,
  ];
  if (e.zone !== 0) parts.push(zoneText(e));
  if (e.mark !== 0) parts.push(`mark=0x${e.mark.toString(16)}`);
  parts.push(`[${e.statusFlags.join(',')}]`);
  return parts.join('  ');
}

export function formatDeleteResult(r: DeleteConntrackResult, dryRun: boolean): string {
  const verb = dryRun ? 'would delete' : 'deleted';
  return `${verb} ${dryRun ? r.matched : r.deleted} of ${r.matched} matching entries (scanned ${r.scanned}, already gone ${r.alreadyGone}, failed ${r.failed}) in ${r.ms.toFixed(1)} ms`;
}

export function formatStats(s: ConntrackStats): string {
  const lines = [`entries ${s.count} of max ${s.max} (${s.max > 0 ? ((100 * s.count) / s.max).toFixed(1) : '0'}%)`];
  lines.push('cpu  found  invalid  insert  insert_failed  drop  early_drop  error  search_restart');
  for (const c of s.perCpu) {
    lines.push([c.cpu, c.found, c.invalid, c.insert, c.insertFailed, c.drop, c.earlyDrop, c.error, c.searchRestart].join('  '));
  }
  return lines.join('\n');
}

function print(text: string): void {
  process.stdout.write(`${text}\n`);
}

async function runList(flags: FilterFlags & { limit?: number }): Promise<void> {
  const addresses = flags.address ?? [];
  const protocols = flags.protocol ?? [];
  if (flags.match !== undefined && addresses.length === 0) throw new CliExit(2, 'conndrain conntrack list: --match needs --address');
  const { api } = await openIn('list', flags.netns);
  try {
    const entries = await api.listConntrack({
      ...(addresses.length > 0 ? { addresses, match: flags.match ?? [...MATCH_MODES] } : {}),
      ...(protocols.length > 0 ? { protocols } : {}),
      ...(flags.zone !== undefined ? { zone: flags.zone } : {}),
      ...(flags.limit !== undefined ? { limit: flags.limit } : {}),
    });
    if (flags.json === true) print(JSON.stringify(entries));
    else {
      for (const e of entries) print(formatEntry(e));
      process.stderr.write(`${entries.length} entries\n`);
    }
  } catch (error) {
    throw failure('list', error);
  } finally {
    api.close();
  }
}

/** Entries as `conntrack list --json` prints them (a JSON array), from a file or `-` (stdin). */
function readEntries(path: string): ConntrackEntryRef[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path === '-' ? 0 : path, 'utf8'));
  } catch (error) {
    throw new CliExit(2, `conndrain conntrack delete: --entries ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!Array.isArray(parsed)) throw new CliExit(2, `conndrain conntrack delete: --entries ${path} must hold a JSON array of entries (what \`conndrain conntrack list --json\` prints)`);
  return parsed as ConntrackEntryRef[];
}

/** `delete --entries`: exactly these entries, by original tuple + zone (+ id), no dump pass. */
async function runDeleteEntries(flags: FilterFlags & { dryRun?: boolean; entries: string }): Promise<void> {
  if ((flags.address ?? []).length > 0 || flags.match !== undefined || flags.protocol !== undefined || flags.zone !== undefined) {
    throw new CliExit(2, 'conndrain conntrack delete: --entries deletes exactly the listed entries; it takes no --address/--match/--protocol/--zone');
  }
  const entries = readEntries(flags.entries);
  if (flags.dryRun === true) {
    print(flags.json === true ? JSON.stringify({ entries: entries.length, dryRun: true }) : `would delete ${entries.length} listed entries`);
    return;
  }
  const { api } = await openIn('delete', flags.netns);
  let result: Awaited<ReturnType<typeof api.deleteConntrackEntries>>;
  try {
    result = await api.deleteConntrackEntries(entries);
  } catch (error) {
    throw failure('delete', error);
  } finally {
    api.close();
  }
  print(flags.json === true ? JSON.stringify(result) : `deleted ${result.deleted} of ${entries.length} listed entries (already gone ${result.alreadyGone}, failed ${result.failed}) in ${result.ms.toFixed(1)} ms`);
  if (result.failed > 0) throw new CliExit(1);
}

async function runDelete(flags: FilterFlags & { dryRun?: boolean; entries?: string }): Promise<void> {
  if (flags.entries !== undefined) {
    await runDeleteEntries({ ...flags, entries: flags.entries });
    return;
  }
  const addresses = flags.address ?? [];
  const protocols = flags.protocol ?? [];
  if (addresses.length === 0) throw new CliExit(2, 'conndrain conntrack delete: give at least one --address (nothing is deleted without one), or --entries FILE');
  const { api } = await openIn('delete', flags.netns);
  let result: DeleteConntrackResult;
  try {
    result = await api.deleteConntrack({
      addresses,
      match: flags.match ?? DELETE_DEFAULT_MATCH,
      ...(protocols.length > 0 ? { protocols } : {}),
      ...(flags.zone !== undefined ? { zone: flags.zone } : {}),
      dryRun: flags.dryRun === true,
    });
  } catch (error) {
    throw failure('delete', error);
  } finally {
    api.close();
  }
  print(flags.json === true ? JSON.stringify({ ...result, dryRun: flags.dryRun === true }) : formatDeleteResult(result, flags.dryRun === true));
  if (result.failed > 0) throw new CliExit(1);
}

async function runStats(flags: { netns?: string; json?: boolean }): Promise<void> {
  const { api } = await openIn('stats', flags.netns);
  try {
    const stats = await api.conntrackStats();
    print(flags.json === true ? JSON.stringify(stats) : formatStats(stats));
  } catch (error) {
    throw failure('stats', error);
  } finally {
    api.close();
  }
}

/** conntrack's words for an entry's zone: `zone=N` (both directions), `orig-zone=N` or `reply-zone=N`. */
function zoneText(e: ConntrackEntry): string {
  if (e.origZone === 0) return `reply-zone=${e.zone}`;
  if (e.replyZone === 0) return `orig-zone=${e.zone}`;
  return `zone=${e.zone}`;
}

/** `conndrain conntrack list|delete|stats` (and `stale`): ctnetlink through netlink-native, no `conntrack` CLI. */
export function defineConntrackCommand(conntrack: Command): void {
  conntrack.addHelpText('after', `
Examples:
  conndrain conntrack delete --address 10.244.1.7,fd00::7 --dry-run      # what a dead pod left behind
  conndrain conntrack list --address 10.244.1.7 --match replySrc --protocol tcp,udp
  conndrain conntrack stats --netns node1 --json`);

  addFilterOptions(conntrack.command('list').description('list entries (all, or those matching the filter)'), 'default: any of them')
    .addOption(new Option('--limit <n>', 'at most this many entries').argParser(integerIn(0, Number.MAX_SAFE_INTEGER)))
    .addHelpText('after', '\nExample:\n  conndrain conntrack list --netns node1 --address 10.244.1.7 --match replySrc,origDst --json')
    .action(async (flags: FilterFlags & { limit?: number }) => {
      await runList(flags);
    });

  addFilterOptions(conntrack.command('delete').description('delete the entries of the given addresses in one table pass, or exactly the --entries given (batched, verified by the kernel\'s answers)'), `default: ${DELETE_DEFAULT_MATCH.join(',')}`)
    .addOption(new Option('--dry-run', 'count what would be deleted, delete nothing'))
    .addOption(new Option('--entries <file>', 'delete exactly these entries (JSON array as `list --json` prints; - = stdin) by original tuple, zone and id: no table pass, a newer entry reusing a tuple is left alone'))
    .addHelpText('after', `
Examples:
  conndrain conntrack delete --address 10.244.1.7 --address fd00:244::7 --match replySrc,origDst --dry-run
  conndrain conntrack list --address 10.244.1.7 --match replySrc --protocol udp --json > e.json && conndrain conntrack delete --entries e.json
Exit code: 0 done, 1 some delete failed, netlink error or missing network namespace, 2 usage error (one line on stderr; docs/cli-errors.md).`)
    .action(async (flags: FilterFlags & { dryRun?: boolean; entries?: string }) => {
      await runDelete(flags);
    });

  conntrack
    .command('stats')
    .description('table count, nf_conntrack_max and per-CPU statistics')
    .addOption(new Option('--netns <name>', 'network namespace under /var/run/netns'))
    .addOption(new Option('--json', 'machine-readable output'))
    .addHelpText('after', '\nExample:\n  conndrain conntrack stats --json')
    .action(async (flags: { netns?: string; json?: boolean }) => {
      await runStats(flags);
    });

  defineStaleCommand(conntrack.command(STALE.name).description(STALE.description));
}
