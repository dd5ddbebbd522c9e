import type { IncomingMessage } from 'node:http';

export type BodyRead = { kind: 'ok'; text: string } | { kind: 'too-large' } | { kind: 'aborted'; error: Error };

/** Reads a request body up to `limit` bytes; stops reading (without buffering more) past it. Never rejects. */
export function readBody(req: IncomingMessage, limit: number): Promise<BodyRead> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (result: BodyRead): void => {
      if (done) return;
      done = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      resolve(result);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        chunks.length = 0;
        // Keep draining (discarding) so the 413 can be written; the connection is closed after it.
        req.resume();
        finish({ kind: 'too-large' });
        return;
      }
      chunks.push(chunk);
    };
    // A review usually arrives as one chunk (one TLS record holds 16 KiB): decode it in place.
    const onEnd = (): void => finish({ kind: 'ok', text: (chunks.length === 1 ? chunks[0] as Buffer : Buffer.concat(chunks, size)).toString('utf8') });
    const onError = (error: Error): void => finish({ kind: 'aborted', error });
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}
