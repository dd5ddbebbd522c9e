// The client of the flow-pinning VM test (plain JS). Commands on stdin, one JSON per line:
//   {"op":"streams","ports":[..]}   long-lived streams from these source ports: each learns its
//                                   pod from the first line, then sends a numbered line every 50 ms
//   {"op":"probe","ports":[..]}     one short connection per port: which pod answered (null: none)
//   {"op":"stop"}                   ends every stream with `q`, compares the server's byte count
// Answers are JSON lines on stdout.
import net from 'node:net';
import readline from 'node:readline';

const [vip, portText, local] = process.argv.slice(2);
const port = Number(portText);
const streams = [];
const out = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);

function lines(socket, onLine) {
  let buffer = '';
  socket.on('data', (chunk) => {
    buffer += chunk.toString('latin1');
    let nl;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      onLine(line);
    }
  });
}

function openStream(localPort) {
  return new Promise((resolve) => {
    const s = { port: localPort, pod: null, sent: 0, received: null, error: null, closedEarly: false, done: false, timer: null, socket: null };
    const socket = net.connect({ host: vip, port, localAddress: local, localPort });
    s.socket = socket;
    socket.setNoDelay(true);
    let seq = 0;
    socket.on('error', (e) => { s.error = s.error ?? e.code ?? e.message; clearInterval(s.timer); resolve(s); });
    socket.on('close', () => { if (!s.done) s.closedEarly = true; clearInterval(s.timer); resolve(s); });
    lines(socket, (line) => {
      if (s.pod === null) {
        s.pod = line;
        s.timer = setInterval(() => {
          const text = `${++seq}:${'x'.repeat(100)}\n`;
          if (socket.write(text)) s.sent += text.length; else s.sent += text.length;
        }, 50);
        resolve(s);
      } else if (line.startsWith('total=')) {
        s.received = Number(line.slice(6));
        s.done = true;
      }
    });
    streams.push(s);
  });
}

function probe(localPort, timeoutMs) {
  return new Promise((resolve) => {
    const socket = net.connect({ host: vip, port, localAddress: local, localPort });
    let pod = null;
    const timer = setTimeout(() => { socket.destroy(); resolve({ port: localPort, pod, error: 'timeout' }); }, timeoutMs);
    socket.on('error', (e) => { clearTimeout(timer); resolve({ port: localPort, pod, error: e.code ?? e.message }); });
    lines(socket, (line) => { if (pod === null) { pod = line; socket.write('probe\n'); } });
    socket.on('end', () => { socket.end(); });
    socket.on('close', () => { clearTimeout(timer); resolve({ port: localPort, pod, error: null }); });
  });
}

const rl = readline.createInterface({ input: process.stdin });
rl.on('line', async (text) => {
  const cmd = JSON.parse(text);
  if (cmd.op === 'streams') {
    const opened = await Promise.all(cmd.ports.map(openStream));
    out({ k: 'streams', streams: opened.map(({ port: p, pod, error }) => ({ port: p, pod, error })) });
  } else if (cmd.op === 'probe') {
    const results = [];
    for (const p of cmd.ports) results.push(await probe(p, cmd.timeoutMs ?? 3000));
    out({ k: 'probe', results });
  } else if (cmd.op === 'status') {
    out({ k: 'status', streams: streams.map(({ port: p, pod, sent, error, closedEarly }) => ({ port: p, pod, sent, error, closedEarly })) });
  } else if (cmd.op === 'stop') {
    for (const s of streams) { clearInterval(s.timer); if (!s.error && !s.closedEarly) s.socket.write('q\n'); }
    await new Promise((r) => setTimeout(r, cmd.waitMs ?? 3000));
    out({ k: 'stopped', streams: streams.map(({ port: p, pod, sent, received, error, closedEarly, done }) => ({ port: p, pod, sent, received, error, closedEarly, done })) });
    for (const s of streams) s.socket.destroy();
  }
});
out({ k: 'ready' });
