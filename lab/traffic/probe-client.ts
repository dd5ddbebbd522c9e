/**
 * Asks "which pod does this flow reach?" for many flows: for each source port, one TCP
 * connection from the client's address to the service, one request, the answering pod's
 * name, then an RST close (no TIME_WAIT, so ports can be probed again later).
 * Commands on stdin, one JSON line each: {"id":1,"ports":[...],"timeoutMs":2000};
 * answers on stdout: {"k":"probe","id":1,"results":[{"port":p,"pod":"pod-1-1"|null}]}.
 *   probe-client.ts <bind-address> <service-address> <port>
 */
import { createInterface } from 'node:readline';
import { Connection } from './tcp-flows.js';

const [bind = '0.0.0.0', target = '127.0.0.1', portText = '80'] = process.argv.slice(2);

interface ProbeCommand {
  id: number;
  ports: number[];
  timeoutMs: number;
}

async function probe(localPort: number, timeoutMs: number): Promise<string | null> {
  let connection: Connection | undefined;
  try {
    connection = await Connection.open(bind, target, Number(portText), timeoutMs, localPort);
    return (await connection.request(0, '', timeoutMs)).split(' ')[2] ?? null;
  } catch {
    return null;
  } finally {
    connection?.socket.resetAndDestroy();
  }
}

createInterface({ input: process.stdin })
  .on('line', (line) => {
    const command = JSON.parse(line) as ProbeCommand;
    void (async () => {
      const results: { port: number; pod: string | null }[] = [];
      for (const port of command.ports) results.push({ port, pod: await probe(port, command.timeoutMs) });
      process.stdout.write(`${JSON.stringify({ k: 'probe', id: command.id, results })}\n`);
    })();
  })
  .on('close', () => process.exit(0));
process.stdout.write(`${JSON.stringify({ k: 'ready' })}\n`);
