/**
 * Raw TCP requests for the drain API's robustness tests: writes exactly the given bytes (no
 * HTTP client fixing them up), half-closes, and collects whatever comes back until the server
 * closes or `idleMs` pass without data.
 */
import { connect } from 'node:net';

export interface RawReply {
  bytes: Buffer;
  /** The connection failed outright (refused: the server is gone). */
  error: string | undefined;
}

/** `to`: a loopback port, or a unix socket path (a relayed agent port). */
export function rawRequest(to: number | string, payload: Buffer | string, options: { idleMs?: number; halfClose?: boolean } = {}): Promise<RawReply> {
  const idleMs = options.idleMs ?? 300;
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let error: string | undefined;
    const socket = typeof to === 'number' ? connect({ host: '127.0.0.1', port: to }) : connect({ path: to });
    let timer: NodeJS.Timeout | undefined;
    const finish = (): void => {
      if (timer !== undefined) clearTimeout(timer);
      socket.destroy();
      resolve({ bytes: Buffer.concat(chunks), error });
    };
    const arm = (): void => {
      if (timer !== undefined) clearTimeout(timer);
      timer = setTimeout(finish, idleMs);
    };
    socket.on('connect', () => {
      socket.write(payload, () => undefined);
      if (options.halfClose !== false) socket.end();
      arm();
    });
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      arm();
    });
    socket.on('error', (e: NodeJS.ErrnoException) => {
      if (chunks.length === 0 && (e.code === 'ECONNREFUSED' || e.code === 'ENOENT')) error = e.code;
    });
    socket.on('close', finish);
  });
}

export interface ParsedResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The first HTTP/1.1 response in `bytes` (after any 1xx), or a reason it is not one. */
export function firstResponse(bytes: Buffer): ParsedResponse | string {
  let text = bytes.toString('latin1');
  for (;;) {
    const headEnd = text.indexOf('\r\n\r\n');
    if (headEnd < 0) return `no complete response head in ${JSON.stringify(text.slice(0, 200))}`;
    const [statusLine = '', ...lines] = text.slice(0, headEnd).split('\r\n');
    const m = /^HTTP\/1\.1 (\d{3}) [^\r\n]*$/.exec(statusLine);
    if (m === null) return `bad status line ${JSON.stringify(statusLine.slice(0, 200))}`;
    const status = Number(m[1]);
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const rest = text.slice(headEnd + 4);
    if (status >= 100 && status < 200) {
      text = rest;
      continue;
    }
    const length = headers['content-length'];
    const body = length === undefined ? rest : Buffer.from(rest, 'latin1').subarray(0, Number(length)).toString('utf8');
    return { status, headers, body };
  }
}
