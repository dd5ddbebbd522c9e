import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Command } from 'commander';
import { formatService, loadIpvsKeys, registerIpvsCommands } from './ipvs.js';

await loadIpvsKeys();

test('ipvs list: text output names the service, scheduler, flags and each real server with its forwarding', () => {
  const text = formatService({
    key: { family: 4, protocol: 'tcp', address: '10.96.0.10', port: 80 },
    scheduler: 'mh',
    flags: 0x0b,
    flagNames: ['persistent', 'hashed', 'sched-flag-1'],
    timeout: 300,
    netmask: 0xffffffff,
    destinations: [
      { address: '10.244.1.5', port: 8080, family: 4, forwarding: 'tunnel', weight: 0, upperThreshold: 0, lowerThreshold: 0, tunnelType: 'gue', tunnelPort: 6080, tunnelFlags: 1, activeConnections: 2, inactiveConnections: 1, persistentConnections: 0 },
      { address: 'fd00::5', port: 80, family: 6, forwarding: 'masq', weight: 3, upperThreshold: 100, lowerThreshold: 10, tunnelType: 'ipip', tunnelPort: 0, tunnelFlags: 0, activeConnections: 0, inactiveConnections: 0, persistentConnections: 0 },
    ],
  });
  assert.equal(text, [
    'tcp:10.96.0.10:80  mh  [persistent,hashed,sched-flag-1]  timeout 300s',
    '  -> 10.244.1.5:8080  tunnel(gue port 6080 flags 0x1)  weight 0  active 2  inactive 1  persistent 0',
    '  -> [fd00::5]:80  masq  weight 3  active 0  inactive 0  persistent 0  thresholds 10..100',
  ].join('\n'));
});

function helpOf(...path: string[]): string {
  const program = new Command('conndrain').exitOverride();
  registerIpvsCommands(program);
  let command: Command | undefined = program;
  for (const name of path) command = command?.commands.find((c) => c.name() === name);
  assert.ok(command, path.join(' '));
  let out = '';
  command.configureOutput({ writeOut: (s) => { out += s; } });
  command.outputHelp();
  return out;
}

test('ipvs --help carries examples', () => {
  assert.match(helpOf('ipvs', 'weight'), /conndrain ipvs weight tcp:10\.96\.0\.10:80 10\.244\.1\.5:8080 0/);
  assert.match(helpOf('ipvs', 'list'), /conndrain ipvs list --json/);
});

test('ipvs weight: malformed arguments are refused before anything is opened', async () => {
  for (const args of [['tcp:10.0.0.1', '10.0.0.2:80', '0'], ['tcp:10.0.0.1:80', '10.0.0.2', '0'], ['tcp:10.0.0.1:80', '10.0.0.2:80', '-1'], ['tcp:10.0.0.1:80', '10.0.0.2:80', 'x']]) {
    const program = new Command('conndrain').exitOverride();
    program.configureOutput({ writeErr: () => {}, writeOut: () => {} });
    registerIpvsCommands(program);
    await assert.rejects(program.parseAsync(['node', 'conndrain', 'ipvs', 'weight', ...args]), { code: 'commander.invalidArgument' }, args.join(' '));
  }
});
