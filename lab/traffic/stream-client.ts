/**
 * One long-lived TCP stream from a fixed source port (the flow whose node dies): a request
 * of `payloadBytes` every `intervalMs`, each answered by the pod with how many bytes it has
 * received on this connection. Never reconnects: the first failure ends it. Lines:
 *   {"k":"tconn",...} once, {"k":"t",...} per request, {"k":"tfail",...} at the end if it broke.
 *   stream-client.ts <bind> <target> <port> <localPort> <intervalMs> <payloadBytes> <timeoutMs>
 */
import { createInterface } from 'node:readline';
import { Connection } from './tcp-flows.js';
import { emit, nowMs } from './wire.js';

const [bind = '0.0.0.0', target = '127.0.0.1', port = '80', localPort = '0', interval = '50', payload = '512', timeout = '3000'] = process.argv.slice(2);
const padding = 'x'.repeat(Math.max(0, Number(payload) - 16));
let stopped = false;
let written = 0;
/** Bytes of the request on the wire when the lab stopped the stream (not lost, just unanswered yet). */
let inFlight = 0;

createInterface({ input: process.stdin }).on('close', () => {
  stopped = true;
  process.stdout.write(`${JSON.stringify({ k: 'written', bytes: written - inFlight })}\n`, () => process.exit(0));
});

try {
  const connection = await Connection.open(bind, target, Number(port), Number(timeout), Number(localPort));
  const first = (await connection.request(0, '', Number(timeout))).split(' ');
  written += 'r 0 \n'.length;
  emit({ k: 'tconn', flow: 0, t: nowMs(), pod: first[2] ?? '', port: Number(localPort) });
  for (let seq = 1; !stopped; seq++) {
    const started = nowMs();
    const line = `r ${seq} ${padding}\n`;
    try {
      written += line.length;
      inFlight = line.length;
      const [, , pod, bytes] = (await connection.request(seq, padding, Number(timeout))).split(' ');
      inFlight = 0;
      emit({ k: 't', flow: 0, seq, t: started, ok: true, pod: pod ?? '', bytes: Number(bytes) });
    } catch (error) {
      if (stopped) break;
      inFlight = 0;
      const errno = error as NodeJS.ErrnoException;
      emit({ k: 't', flow: 0, seq, t: started, ok: false });
      emit({ k: 'tfail', flow: 0, t: nowMs(), kind: errno.code === 'ECONNRESET' ? 'reset' : errno.code === 'ETIMEDOUT' ? 'timeout' : 'other', detail: errno.message });
      break;
    }
    const wait = Number(interval) - (nowMs() - started);
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }
} catch (error) {
  emit({ k: 'tfail', flow: 0, t: nowMs(), kind: 'other', detail: (error as Error).message });
}
