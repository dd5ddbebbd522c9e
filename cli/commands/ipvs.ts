/**
 * `conndrain ipvs list|weight`: the node's IPVS virtual services and real servers, over the
 * netlink-native addon (loaded lazily inside the actions: the webhook image has no addon).
 */
import { Argument, InvalidArgumentError, Option, type Command } from 'commander';
import type { IpvsDestination, IpvsDestinationKey, IpvsService, IpvsServiceKey, NetlinkError } from 'netlink-native/types';
import { IPVS } from '../command-listings.js';
import { CliExit } from '../exit.js';
import { loadNetlinkNative, type NativeModule } from '../load-native.js';


/**
 * netlink-native's key parsers and formatters, loaded by the `ipvs` command's preSubcommand
 * hook (so `conndrain --help` and the other commands do not load the package) before
 * `list`/`weight` parse their arguments.
 */
let keys: Pick<NativeModule, 'formatDestinationKey' | 'formatServiceKey' | 'parseDestinationKey' | 'parseServiceKey'> | undefined;

function loadedKeys(): NonNullable<typeof keys> {
  if (keys === undefined) throw new Error('internal: netlink-native not loaded before the ipvs subcommand');
  return keys;
}

export async function loadIpvsKeys(): Promise<void> {
  keys ??= await import('netlink-native');
}

const formatServiceKey = (key: IpvsServiceKey): string => loadedKeys().formatServiceKey(key);
const formatDestinationKey = (key: IpvsDestinationKey): string => loadedKeys().formatDestinationKey(key);
const parseServiceKey = (text: string): IpvsServiceKey | undefined => loadedKeys().parseServiceKey(text);
const parseDestinationKey = (text: string): IpvsDestinationKey | undefined => loadedKeys().parseDestinationKey(text);
type Netlink = import('netlink-native').NativeNetlink;

export interface ServiceWithDestinations extends IpvsService {
  destinations: IpvsDestination[];
}

/** Where the commands print results (stdout by default; tests pass their own). */
export type Print = (text: string) => void;

const printToStdout: Print = (text) => {
  process.stdout.write(text);
};

function parseService(text: string): IpvsServiceKey {
  const key = parseServiceKey(text);
  if (key === undefined) throw new InvalidArgumentError('expected PROTO:ADDRESS:PORT (tcp:10.96.0.10:80, udp:[fd00::a]:53) or fwmark:N / fwmark6:N');
  return key;
}

function parseDestination(text: string): IpvsDestinationKey {
  const key = parseDestinationKey(text);
  if (key === undefined) throw new InvalidArgumentError('expected ADDRESS:PORT (10.244.1.5:8080, [fd00::5]:80)');
  return key;
}

function parseWeight(text: string): number {
  const weight = Number(text);
  if (!/^\d+$/.test(text) || weight > 0x7fffffff) throw new InvalidArgumentError('expected an integer weight 0..2147483647');
  return weight;
}

function failure(command: string, error: unknown): CliExit {
  const code = (error as Partial<NetlinkError>).code;
  return new CliExit(code === 'EINVAL' ? 2 : 1, `conndrain ipvs ${command}: ${error instanceof Error ? error.message : String(error)}`);
}

async function openIn(command: string, netns: string | undefined): Promise<Netlink> {
  const native = await loadNetlinkNative();
  try {
    return native.openNetlink(netns === undefined ? {} : { netns });
  } catch (error) {
    throw failure(command, error);
  }
}

export function formatDestination(d: IpvsDestination): string {
  const forwarding = d.forwarding === 'tunnel'
    ? `tunnel(${d.tunnelType}${d.tunnelPort !== 0 ? ` port ${d.tunnelPort}` : ''}${d.tunnelFlags !== 0 ? ` flags 0x${d.tunnelFlags.toString(16)}` : ''})`
    : d.forwarding;
  const thresholds = d.upperThreshold !== 0 || d.lowerThreshold !== 0 ? `  thresholds ${d.lowerThreshold}..${d.upperThreshold}` : '';
  return `  -> ${formatDestinationKey(d)}  ${forwarding}  weight ${d.weight}  active ${d.activeConnections}  inactive ${d.inactiveConnections}  persistent ${d.persistentConnections}${thresholds}`;
}

export function formatService(s: ServiceWithDestinations): string {
  const persistence = (s.flags & 0x1) !== 0 ? `  timeout ${s.timeout}s` : '';
  const lines = [`${formatServiceKey(s.key)}  ${s.scheduler}  [${s.flagNames.join(',')}]${persistence}`];
  for (const d of s.destinations) lines.push(formatDestination(d));
  return lines.join('\n');
}

async function runList(flags: { json?: boolean; netns?: string; service?: IpvsServiceKey }, print: Print): Promise<void> {
  const netlink = await openIn('list', flags.netns);
  try {
    const services = flags.service === undefined
      ? await netlink.listServices()
      : (await netlink.listServices()).filter((s) => formatServiceKey(s.key) === formatServiceKey(flags.service as IpvsServiceKey));
    if (flags.service !== undefined && services.length === 0) throw new CliExit(1, `conndrain ipvs list: no such virtual service ${formatServiceKey(flags.service)}`);
    const full: ServiceWithDestinations[] = [];
    for (const service of services) full.push({ ...service, destinations: await netlink.listDestinations(service.key) });
    if (flags.json === true) print(`${JSON.stringify(full, null, 2)}\n`);
    else print(full.length === 0 ? 'no IPVS virtual services\n' : `${full.map(formatService).join('\n')}\n`);
  } catch (error) {
    throw error instanceof CliExit ? error : failure('list', error);
  } finally {
    netlink.close();
  }
}

async function runWeight(service: IpvsServiceKey, dest: IpvsDestinationKey, weight: number, flags: { netns?: string; json?: boolean }, print: Print): Promise<void> {
  const netlink = await openIn('weight', flags.netns);
  try {
    const find = async (): Promise<IpvsDestination | undefined> =>
      (await netlink.listDestinations(service)).find((d) => formatDestinationKey(d) === formatDestinationKey(dest));
    const before = await find();
    await netlink.setDestinationWeight(service, dest, weight);
    const after = await find();
    if (flags.json === true) {
      print(`${JSON.stringify({ service, destination: dest, before, after }, null, 2)}\n`);
    } else {
      print(`${formatServiceKey(service)} -> ${formatDestinationKey(dest)}: weight ${String(before?.weight)} -> ${String(after?.weight)} (forwarding ${String(after?.forwarding)} kept)\n`);
    }
  } catch (error) {
    throw failure('weight', error);
  } finally {
    netlink.close();
  }
}

/** `conndrain ipvs list|weight`, defined on the listed `ipvs` command. */
export function defineIpvsCommand(ipvs: Command, print: Print = printToStdout): void {
  ipvs.hook('preSubcommand', loadIpvsKeys);

  ipvs
    .command('list')
    .description('list virtual services (address/port and fwmark, IPv4 and IPv6) with their real servers')
    .addOption(new Option('--service <service>', 'only this service (tcp:10.96.0.10:80, fwmark:42)').argParser(parseService))
    .addOption(new Option('--json', 'machine-readable output'))
    .addOption(new Option('--netns <name>', 'network namespace under /var/run/netns (this one when absent)'))
    .addHelpText('after', '\nExample:\n  conndrain ipvs list --json\n  conndrain ipvs list --service tcp:10.96.0.10:80')
    .action(async (flags: { json?: boolean; netns?: string; service?: IpvsServiceKey }) => runList(flags, print));

  ipvs
    .command('weight')
    .description('set one real server\'s weight, keeping its forwarding method, thresholds and tunnel settings (read-modify-write)')
    .addArgument(new Argument('<service>', 'PROTO:ADDRESS:PORT (tcp:10.96.0.10:80, udp:[fd00::a]:53) or fwmark:N / fwmark6:N').argParser(parseService))
    .addArgument(new Argument('<destination>', 'ADDRESS:PORT of the real server (10.244.1.5:8080)').argParser(parseDestination))
    .addArgument(new Argument('<weight>', 'new weight, 0 stops new connections (in mh/sh the server keeps its lookup slots)').argParser(parseWeight))
    .addOption(new Option('--json', 'machine-readable output (the destination before and after)'))
    .addOption(new Option('--netns <name>', 'network namespace under /var/run/netns (this one when absent)'))
    .addHelpText('after', '\nExample (drain one real server of a service):\n  conndrain ipvs weight tcp:10.96.0.10:80 10.244.1.5:8080 0')
    .action(async (service: IpvsServiceKey, dest: IpvsDestinationKey, weight: number, flags: { netns?: string; json?: boolean }) => runWeight(service, dest, weight, flags, print));
}

/** Adds `ipvs` to `program`, defined now (in-process runs with their own `print`: native/test/ipvs.guest.ts). */
export function registerIpvsCommands(program: Command, print: Print = printToStdout): void {
  defineIpvsCommand(program.command(IPVS.name).description(IPVS.description), print);
}
