/**
 * The CLI error rule (docs/cli-errors.md), as a table: every conntrack/ipvs subcommand with
 * every kind of bad input exits 2 with exactly one line on stderr and nothing on stdout; a
 * network namespace that does not exist is an operational failure (exit 1, one line); and
 * the conntrack entries of a test namespace are all still there afterwards (a delete that
 * took a bad option as valid would have removed the pod's entries). Help only with --help.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openNetlink } from 'netlink-native';
import { insertConntrackForTest } from 'netlink-native/testing';
import { fixture, POD } from '../native/test/conntrack-contract.js';
import { addNetns, conntrackCliKeys, deleteAllNetns, isRoot } from '../native/test/conntrack-netns.js';

const CLI_MAIN = new URL('./main.ts', import.meta.url).pathname;
const ENDPOINTS = join(tmpdir(), `cdct-cli-errors-${process.pid}.yaml`);
const MISSING_NS = `cdct-missing-${process.pid}`;

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function run(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--conditions=conndrain-source', '--import', 'tsx', CLI_MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** Runs every case, two at a time (the machine's cores are shared). */
async function runAll(cases: string[][]): Promise<Run[]> {
  const out: Run[] = new Array<Run>(cases.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < cases.length; i = next++) out[i] = await run(cases[i] ?? []);
  };
  await Promise.all([worker(), worker()]);
  return out;
}

function lines(text: string): string[] {
  return text.split('\n').filter((l) => l !== '');
}

describe('one rule for CLI errors', { skip: !isRoot() ? 'needs root (network namespaces)' : false }, () => {
  let ns = '';
  let keysBefore: string[] = [];

  before(async () => {
    ns = addNetns('err');
    const api = openNetlink({ netns: ns });
    try {
      assert.equal((await insertConntrackForTest(api, fixture())).created, 50);
    } finally {
      api.close();
    }
    keysBefore = conntrackCliKeys(ns).sort();
    writeFileSync(ENDPOINTS, 'apiVersion: v1\nkind: List\nitems: []\n');
  });

  after(() => {
    rmSync(ENDPOINTS, { force: true });
    deleteAllNetns();
  });

  it('bad input: exit 2, one line on stderr naming the option, no help, nothing changed', async () => {
    const commands: Record<string, string[]> = {
      'conntrack list': ['conntrack', 'list', '--netns', ns],
      'conntrack delete': ['conntrack', 'delete', '--netns', ns, '--address', POD.v4],
      'conntrack stats': ['conntrack', 'stats', '--netns', ns],
      'conntrack stale': ['conntrack', 'stale', '--netns', ns, '--endpoints', ENDPOINTS, '--delete'],
      'ipvs list': ['ipvs', 'list', '--netns', ns],
      'ipvs weight': ['ipvs', 'weight', 'tcp:10.96.0.10:80', '10.244.1.5:8080', '0', '--netns', ns],
    };
    const bad: Record<string, { args: string[]; names: RegExp }> = {
      'invalid --match': { args: ['--match', 'foo'], names: /--match/ },
      '--zone 65536': { args: ['--zone', '65536'], names: /--zone/ },
      '--zone -1': { args: ['--zone', '-1'], names: /--zone/ },
      '--protocol foo': { args: ['--protocol', 'foo'], names: /--protocol/ },
      'unknown option': { args: ['--bogus'], names: /--bogus/ },
      'missing value': { args: ['--netns'], names: /--netns/ },
    };
    const cases: Array<{ label: string; args: string[]; names: RegExp }> = [];
    for (const [command, base] of Object.entries(commands)) {
      for (const [kind, b] of Object.entries(bad)) cases.push({ label: `${command} ${kind}`, args: [...base, ...b.args], names: b.names });
    }
    // usage errors of other shapes
    cases.push({ label: 'conntrack delete --address not-an-ip', args: ['conntrack', 'delete', '--netns', ns, '--address', 'not-an-ip'], names: /not-an-ip/ });
    cases.push({ label: 'conntrack list --limit x', args: ['conntrack', 'list', '--netns', ns, '--limit', 'x'], names: /--limit/ });
    cases.push({ label: 'ipvs weight bad service', args: ['ipvs', 'weight', 'tcp:nope', '10.244.1.5:8080', '0'], names: /service/ });
    cases.push({ label: 'missing subcommand', args: ['conntrack'], names: /missing command: one of list, delete, stats, stale/ });
    cases.push({ label: 'unknown subcommand', args: ['conntrack', 'lst'], names: /unknown command 'lst'/ });
    cases.push({ label: 'bad duration', args: ['agent', '--node-name', 'n1', '--hold-interval', '5x'], names: /--hold-interval: "5x" is not a duration/ });
    const results = await runAll(cases.map((c) => c.args));
    const wrong: string[] = [];
    results.forEach((r, i) => {
      const c = cases[i]!;
      const err = lines(r.stderr);
      if (r.status !== 2 || err.length !== 1 || r.stdout !== '' || !c.names.test(err[0] ?? '') || /Usage:/.test(r.stderr)) {
        wrong.push(`${c.label}: exit ${String(r.status)}, stderr ${JSON.stringify(r.stderr)}, stdout ${JSON.stringify(r.stdout.slice(0, 80))}`);
      }
    });
    assert.deepEqual(wrong, []);
    assert.deepEqual(conntrackCliKeys(ns).sort(), keysBefore, 'every entry is still there');
  });

  it('a network namespace that does not exist: exit 1 (operational), one line, in every subcommand', async () => {
    const cases = [
      ['conntrack', 'list', '--netns', MISSING_NS],
      ['conntrack', 'delete', '--netns', MISSING_NS, '--address', POD.v4],
      ['conntrack', 'stats', '--netns', MISSING_NS],
      ['conntrack', 'stale', '--netns', MISSING_NS, '--endpoints', ENDPOINTS],
      ['ipvs', 'list', '--netns', MISSING_NS],
      ['ipvs', 'weight', 'tcp:10.96.0.10:80', '10.244.1.5:8080', '0', '--netns', MISSING_NS],
    ];
    const results = await runAll(cases);
    const wrong = results.flatMap((r, i) => (r.status === 1 && lines(r.stderr).length === 1 && /does not exist/.test(r.stderr) ? [] : [`${cases[i]!.join(' ')}: exit ${String(r.status)} ${JSON.stringify(r.stderr)}`]));
    assert.deepEqual(wrong, []);
  });

  it('help text only with --help (stdout, exit 0)', async () => {
    const [help] = await runAll([['conntrack', 'delete', '--help']]);
    assert.equal(help?.status, 0);
    assert.match(help?.stdout ?? '', /Usage: conndrain conntrack delete/);
    assert.equal(help?.stderr, '');
  });
});
