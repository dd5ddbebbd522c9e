/**
 * Hosts the list/watch API stand-in (test/apiserver) in the lab's control namespace. The
 * stand-in listens on 127.0.0.1; a relay on 0.0.0.0 makes it reachable from every node
 * namespace over its control link. The lab drives pods, Namespaces and Services through JSON
 * lines on stdin (control/api-commands.ts); exits when stdin closes.
 *   api-host.ts <relay-port>
 */
import { createServer, connect } from 'node:net';
import { createInterface } from 'node:readline';
import { FakeApiServer } from '../../test/apiserver/server.js';
import { markDeleting, setReady } from '../../test/apiserver/pods.js';
import type { ApiCommand, ApiReply } from './api-commands.js';

const relayPort = Number(process.argv[2] ?? '16443');
const api = new FakeApiServer();
await api.start(0);
const apiPort = Number(new URL(api.url).port);

const relay = createServer((inbound) => {
  const outbound = connect(apiPort, '127.0.0.1');
  inbound.pipe(outbound).pipe(inbound);
  inbound.on('error', () => outbound.destroy());
  outbound.on('error', () => inbound.destroy());
});
await new Promise<void>((resolve) => relay.listen(relayPort, '0.0.0.0', resolve));

function reply(line: Omit<ApiReply, 'k' | 't'>): void {
  process.stdout.write(`${JSON.stringify({ k: 'reply', t: performance.timeOrigin + performance.now(), ...line })}\n`);
}

async function execute(command: ApiCommand): Promise<void> {
  try {
    switch (command.op) {
      case 'put':
        api.putPod(command.pod);
        break;
      case 'ready':
        api.modifyPod(command.namespace, command.name, (pod) => setReady(pod, command.ready));
        break;
      case 'deleting':
        api.modifyPod(command.namespace, command.name, (pod) => markDeleting(pod, command.graceSeconds));
        break;
      case 'delete':
        if (!api.deletePod(command.namespace, command.name)) throw new Error(`no pod ${command.namespace}/${command.name}`);
        break;
      case 'namespace':
        api.putNamespace(command.name, command.labels);
        break;
      case 'service':
        api.putService(command.service);
        break;
      case 'probe': {
        const response = await fetch(command.url, { signal: AbortSignal.timeout(1000) });
        reply({ id: command.id, ok: response.ok, status: response.status });
        return;
      }
    }
    reply({ id: command.id, ok: true });
  } catch (error) {
    reply({ id: command.id, ok: false, error: (error as Error).message });
  }
}

createInterface({ input: process.stdin })
  .on('line', (line) => void execute(JSON.parse(line) as ApiCommand))
  .on('close', () => {
    relay.close();
    void api.close().then(() => process.exit(0));
  });

process.stdout.write(`${JSON.stringify({ k: 'ready', port: relayPort })}\n`);
