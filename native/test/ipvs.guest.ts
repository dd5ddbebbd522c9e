/**
 * IPVS on a real kernel. Runs INSIDE the QEMU guest (test/vm), started by ipvs.vm.test.ts:
 * the contract suite against the addon on Debian's kernel, then an `mh` service with real TCP
 * traffic showing that a weight edit 1 -> 0 keeps every other client on its real server.
 * Not a *.test.ts file: the host runner must not run it on the host kernel (no IPVS there).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { Command } from 'commander';
import { describeIpvsContract } from './ipvs-contract.js';
import { registerIpvsCommands } from '../../cli/commands/ipvs.js';
import { CliExit } from '../../cli/exit.js';
import { openNetlink, type NativeNetlink } from 'netlink-native';
import type { IpvsDestinationKey, IpvsServiceKey } from 'netlink-native/types';

if (!existsSync('/proc/net/ip_vs')) {
  throw new Error('ipvs.guest.ts runs inside the IPVS test VM (test/vm); use native/test/ipvs.vm.test.ts');
}

async function flush(netlink: NativeNetlink): Promise<void> {
  for (const service of await netlink.listServices()) await netlink.deleteService(service.key);
}

describeIpvsContract('Debian kernel in QEMU (addon)', async () => {
  const netlink = openNetlink();
  await flush(netlink);
  return {
    api: netlink,
    cleanup: async () => {
      await flush(netlink);
      netlink.close();
    },
  };
});

describe('mh scheduler with real TCP traffic', () => {
  const vip: IpvsServiceKey = { family: 4, protocol: 'tcp', address: '10.77.0.1', port: 80 };
  const reals = [1, 2, 3, 4].map((i) => `10.77.1.${i}`);
  const sources = Array.from({ length: 48 }, (_, i) => `10.77.2.${i + 1}`);
  const servers: Server[] = [];
  let netlink: NativeNetlink;

  const ip = (...args: string[]): void => {
    execFileSync('ip', args, { stdio: 'pipe' });
  };

  before(async () => {
    ip('link', 'set', 'lo', 'up');
    ip('addr', 'replace', '10.77.0.1/32', 'dev', 'lo');
    ip('addr', 'replace', '10.77.1.0/24', 'dev', 'lo');
    ip('addr', 'replace', '10.77.2.0/24', 'dev', 'lo');
    for (const address of reals) {
      // Each real server answers with its own address: the client learns where IPVS sent it.
      const server = createServer((socket) => socket.end(`${address}\n`));
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(8080, address, () => resolve());
      });
      servers.push(server);
    }
    netlink = openNetlink();
    await flush(netlink);
    await netlink.addService({ key: vip, scheduler: 'mh' });
    for (const address of reals) await netlink.addDestination(vip, { address, port: 8080, weight: 1, forwarding: 'masq' });
  });

  after(async () => {
    await flush(netlink);
    netlink.close();
    for (const server of servers) server.close();
  });

  /** Which real server a new connection from `source` reaches, or `refused`/`timeout`. */
  function probe(source: string): Promise<string> {
    return new Promise((resolve) => {
      const socket = connect({ host: '10.77.0.1', port: 80, localAddress: source, timeout: 10_000 });
      let data = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => {
        data += chunk;
      });
      socket.on('end', () => resolve(data.trim()));
      socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED' ? 'refused' : `error ${String(error.code)}`));
      socket.on('timeout', () => {
        socket.destroy();
        resolve('timeout');
      });
    });
  }

  let retried = 0;

  /**
   * One connection per source, 8 at a time (the TCG guest is slow). A timed-out probe is
   * retried (mh maps a source address to the same server on every new connection, so a
   * retry asks the same question again); `refused` is an answer: no server for that source.
   */
  async function lookup(): Promise<Map<string, string>> {
    const result = new Map<string, string>();
    for (let i = 0; i < sources.length; i += 8) {
      const batch = sources.slice(i, i + 8);
      const answers = await Promise.all(batch.map(async (source) => {
        let answer = await probe(source);
        for (let attempt = 0; attempt < 2 && answer === 'timeout'; attempt++) {
          retried++;
          answer = await probe(source);
        }
        return answer;
      }));
      batch.forEach((source, k) => result.set(source, answers[k] ?? ''));
    }
    return result;
  }

  test('editing a real server 1 -> 0 keeps every other client on its server; back to 1 restores the same table', async (t) => {
    const initial = await lookup();
    for (const [source, reached] of initial) assert.ok(reals.includes(reached), `${source} reached ${reached}`);
    const counts = reals.map((real) => [...initial.values()].filter((r) => r === real).length);
    t.diagnostic(`initial spread over ${reals.join(', ')}: ${counts.join(', ')}`);
    const drained = reals[counts.indexOf(Math.max(...counts))] ?? '';
    const drainedKey: IpvsDestinationKey = { address: drained, port: 8080 };

    await netlink.setDestinationWeight(vip, drainedKey, 0);
    const listed = (await netlink.listDestinations(vip)).find((d) => d.address === drained);
    assert.deepEqual([listed?.weight, listed?.forwarding], [0, 'masq'], 'still present, at weight 0');
    // The dest served connections: the kernel's counters saw them (inactive once closed).
    assert.ok((listed?.activeConnections ?? 0) + (listed?.inactiveConnections ?? 0) > 0, 'connection counters of the drained server');
    const edited = await lookup();
    for (const [source, before] of initial) {
      const now = edited.get(source);
      // The weight-0 server keeps its Maglev slots (last_weight), mh without the fallback flag
      // finds it unavailable and schedules nobody: its clients get no server at all.
      if (before === drained) assert.ok(!reals.includes(now ?? ''), `${source} reached ${String(now)}; its slot belongs to the weight-0 ${drained}`);
      else assert.equal(now, before, `${source} moved from ${before} to ${String(now)} after a 1 -> 0 edit of ${drained}`);
    }

    await netlink.setDestinationWeight(vip, drainedKey, 1);
    assert.deepEqual(await lookup(), initial, 'weight back to 1: the same lookup as before');
    t.diagnostic(`probes retried after a timeout so far: ${retried}`);
  });

  test('delete + re-add at weight 0 rebuilds the table: the drained server\'s clients move to others (the path the agent must never take)', async (t) => {
    const initial = await lookup();
    const drained = initial.get(sources[0] ?? '') ?? '';
    const key: IpvsDestinationKey = { address: drained, port: 8080 };
    await netlink.deleteDestination(vip, key);
    await netlink.addDestination(vip, { ...key, weight: 0, forwarding: 'masq' });
    const rebuilt = await lookup();
    let moved = 0;
    for (const [source, before] of initial) {
      const now = rebuilt.get(source);
      // Re-added at 0 the server has no slots: the rebuilt table gives its clients to others.
      if (before === drained) assert.ok(now !== drained && reals.includes(now ?? ''), `${source} reached ${String(now)}; a rebuilt table hands it to another server`);
      else if (now !== before) moved++;
    }
    // Maglev keeps most slots on a rebuild, so how many other clients move depends on the
    // addresses; report it rather than assert a number.
    t.diagnostic(`re-add at 0: ${moved} of ${[...initial.values()].filter((r) => r !== drained).length} clients of other servers moved`);
    await netlink.setDestinationWeight(vip, key, 1);
  });
});

describe('conndrain ipvs CLI on the real kernel', () => {
  const service: IpvsServiceKey = { family: 4, protocol: 'tcp', address: '10.78.0.1', port: 80 };
  let netlink: NativeNetlink;
  /**
   * Runs `conndrain ipvs ...` in this process (the same commander registration and actions as
   * cli/main.ts, printing into a string; a separate node+tsx process per call costs a minute
   * under TCG). A CliExit becomes {status, stderr} as the entry point would print it.
   */
  const cli = async (...args: string[]): Promise<{ status: number; stdout: string; stderr: string }> => {
    const program = new Command('conndrain').exitOverride();
    let stdout = '';
    registerIpvsCommands(program, (text) => {
      stdout += text;
    });
    try {
      await program.parseAsync(['node', 'conndrain', 'ipvs', ...args]);
      return { status: 0, stdout, stderr: '' };
    } catch (error) {
      if (error instanceof CliExit) return { status: error.exitCode, stdout, stderr: error.message };
      throw error;
    }
  };

  before(async () => {
    netlink = openNetlink();
    await flush(netlink);
    await netlink.addService({ key: service, scheduler: 'mh' });
    await netlink.addDestination(service, { address: '10.78.1.1', port: 8080, weight: 1, forwarding: 'tunnel', tunnelType: 'gue', tunnelPort: 6080 });
  });

  after(async () => {
    await flush(netlink);
    netlink.close();
  });

  test('ipvs weight sets 0 and keeps the tunnel; ipvs list --json shows it; a missing destination exits 1', async () => {
    const weight = await cli('weight', 'tcp:10.78.0.1:80', '10.78.1.1:8080', '0', '--json');
    assert.equal(weight.status, 0, weight.stderr);
    const change = JSON.parse(weight.stdout) as { before: { weight: number }; after: { weight: number; forwarding: string; tunnelType: string; tunnelPort: number } };
    assert.deepEqual([change.before.weight, change.after.weight, change.after.forwarding, change.after.tunnelType, change.after.tunnelPort], [1, 0, 'tunnel', 'gue', 6080]);
    const list = await cli('list', '--json');
    assert.equal(list.status, 0, list.stderr);
    const services = JSON.parse(list.stdout) as Array<{ key: IpvsServiceKey; scheduler: string; destinations: Array<{ address: string; weight: number }> }>;
    assert.deepEqual(services.map((s) => [s.key, s.scheduler, s.destinations.map((d) => [d.address, d.weight])]), [[service, 'mh', [['10.78.1.1', 0]]]]);
    const missing = await cli('weight', 'tcp:10.78.0.1:80', '10.78.1.9:8080', '0');
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /no such destination 10\.78\.1\.9:8080 in service tcp:10\.78\.0\.1:80/);
  });
});
