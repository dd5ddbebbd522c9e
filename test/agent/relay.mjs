#!/usr/bin/env node
// Byte relay between two endpoints, for crossing network namespaces in tests:
//   relay.mjs <listen> <connect>   each `tcp:<host>:<port>` or `unix:<path>`
// Run it under `ip netns exec <ns>` to expose a unix socket (reachable from every namespace
// through the filesystem) as a TCP port inside the namespace, or the other way round.
// Prints "ready" once listening; exits on SIGTERM.
import { connect, createServer } from 'node:net';
import { rmSync } from 'node:fs';

function parse(spec) {
  if (spec.startsWith('unix:')) return { path: spec.slice(5) };
  const m = /^tcp:(.+):(\d+)$/.exec(spec);
  if (!m) throw new Error(`bad endpoint ${spec}`);
  return { host: m[1], port: Number(m[2]) };
}

const [listenSpec, connectSpec] = process.argv.slice(2);
const from = parse(listenSpec);
const to = parse(connectSpec);
const server = createServer((inbound) => {
  const outbound = to.path ? connect(to.path) : connect(to.port, to.host);
  inbound.pipe(outbound).pipe(inbound);
  inbound.on('error', () => outbound.destroy());
  outbound.on('error', () => inbound.destroy());
  inbound.on('close', () => outbound.destroy());
  outbound.on('close', () => inbound.destroy());
});
if (from.path) rmSync(from.path, { force: true });
server.listen(from.path ? { path: from.path } : { port: from.port, host: from.host }, () => process.stdout.write('ready\n'));
process.on('SIGTERM', () => {
  server.close();
  process.exit(0);
});
