/** One GET over HTTPS as a scraper makes it (an optional bearer token), for the metrics tests. */
import { request } from 'node:https';
import type { PeerCertificate } from 'node:tls';

export interface Scrape {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
  /** The server's certificate as presented. */
  certificate: PeerCertificate;
}

export function scrape(port: number, path: string, options: { token?: string; ca?: string; servername?: string } = {}): Promise<Scrape> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = options.token === undefined ? {} : { Authorization: `Bearer ${options.token}` };
    const req = request({
      host: '127.0.0.1', port, path, method: 'GET', headers, agent: false,
      // A self-signed serving certificate: the ServiceMonitor's insecureSkipVerify, unless a CA is given.
      ...(options.ca === undefined ? { rejectUnauthorized: false } : { ca: options.ca, servername: options.servername ?? 'localhost' }),
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => resolve({
        status: res.statusCode ?? 0,
        body: Buffer.concat(chunks).toString('utf8'),
        headers: res.headers,
        certificate: (res.socket as import('node:tls').TLSSocket).getPeerCertificate(),
      }));
    });
    req.setTimeout(10_000, () => req.destroy(new Error(`GET ${path}: no answer in 10 s`)));
    req.on('error', reject);
    req.end();
  });
}
