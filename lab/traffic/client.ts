/**
 * The lab's client: DNS-like UDP flows and long-lived TCP streams to one service address,
 * balanced so every pod carries the same number of flows; every outcome is a JSON line on
 * stdout. Stops (without reporting unfinished requests) when its stdin closes.
 *   client.ts '<ClientConfig JSON>'
 */
import { createInterface } from 'node:readline';
import type { ClientConfig } from './client-config.js';
import { TcpFlows } from './tcp-flows.js';
import { UdpFlows } from './udp-flows.js';
import { emit } from './wire.js';

const config = JSON.parse(process.argv[2] ?? '{}') as ClientConfig;
const udp = config.udp === undefined ? undefined : new UdpFlows(config.udp, config.bind, config.target);
const tcp = config.tcp === undefined ? undefined : new TcpFlows(config.tcp, config.bind, config.target);

createInterface({ input: process.stdin }).on('close', () => {
  udp?.stop();
  tcp?.stop();
  setTimeout(() => process.exit(0), 50);
});

try {
  await udp?.open(config.pods);
  await tcp?.open(config.pods);
  udp?.start();
  tcp?.start();
  emit({ k: 'ready' });
} catch (error) {
  process.stderr.write(`client: ${(error as Error).message}\n`);
  process.exit(2);
}
