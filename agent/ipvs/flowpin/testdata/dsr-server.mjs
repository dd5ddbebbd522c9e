// A DSR "pod" for the flow-pinning VM test (plain JS: tsx startup is slow in the TCG guest).
// Listens on :80; every connection first gets this pod's name, then its bytes are counted;
// a line `q` answers `total=<bytes before q>` and closes, `probe` closes at once (server
// first, so the client's port can be reused without TIME_WAIT on its side).
import net from 'node:net';

const name = process.argv[2] ?? 'pod';
const server = net.createServer((socket) => {
  let total = 0;
  let buffer = '';
  socket.on('error', () => undefined);
  socket.write(`${name}\n`);
  socket.on('data', (chunk) => {
    buffer += chunk.toString('latin1');
    let nl;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (line === 'q') {
        socket.end(`total=${total}\n`);
        return;
      }
      if (line === 'probe') {
        socket.end();
        return;
      }
      total += line.length + 1;
    }
  });
});
server.listen(80, '0.0.0.0', () => process.stdout.write(`${JSON.stringify({ k: 'ready', name })}\n`));
process.on('SIGTERM', () => process.exit(0));
