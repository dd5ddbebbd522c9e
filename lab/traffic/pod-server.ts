/**
 * A "pod": answers UDP queries (DNS-like) and long-lived TCP request streams with its own
 * name, so the client knows which pod each flow reached. Runs inside the pod's namespace
 * (`ip netns exec`), exits when its stdin closes (the lab went away).
 *   pod-server.ts <pod-name> <udp-port> <tcp-port>
 */
import { createSocket } from 'node:dgram';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { emit } from './wire.js';

const [name = 'pod', udpPortText = '53', tcpPortText = '80'] = process.argv.slice(2);

const udp = createSocket('udp4');
udp.on('message', (message, rinfo) => {
  const [kind, flow, seq] = message.toString('utf8').split(' ');
  if (kind !== 'q') return;
  udp.send(`a ${flow} ${seq} ${name}`, rinfo.port, rinfo.address);
});
udp.on('error', () => undefined);

const tcp = createServer((socket) => {
  let received = 0;
  let buffered = '';
  socket.setNoDelay(true);
  socket.on('data', (chunk: Buffer) => {
    received += chunk.length;
    buffered += chunk.toString('utf8');
    let newline = buffered.indexOf('\n');
    while (newline >= 0) {
      const [kind, seq] = buffered.slice(0, newline).split(' ');
      buffered = buffered.slice(newline + 1);
      if (kind === 'r') socket.write(`a ${seq} ${name} ${received}\n`);
      newline = buffered.indexOf('\n');
    }
  });
  socket.on('error', () => undefined);
});

let listening = 0;
const onListening = () => {
  listening += 1;
  if (listening === 2) emit({ k: 'ready', pod: name });
};
udp.bind(Number(udpPortText), '0.0.0.0', onListening);
tcp.listen(Number(tcpPortText), '0.0.0.0', onListening);

createInterface({ input: process.stdin }).on('close', () => {
  udp.close();
  tcp.close();
  process.exit(0);
});
