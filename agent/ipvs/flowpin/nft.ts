/**
 * nftables through its JSON interface: `nft -j -f FILE` with one JSON batch (nft runs a whole
 * file as one netlink transaction), `nft -j list ...` read back as JSON. Never composes or
 * parses nft's CLI text. The batch goes through a private temporary file rather than stdin:
 * nft opens `/dev/stdin` by path, which fails (ENXIO) when stdin is the socket pair Node's
 * child_process uses for pipes. `prefix` runs nft elsewhere (tests: `ip netns exec <ns>`).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NFT_FAMILY, NFT_TABLE, type NftBatch } from '../../../src/flowpin/nft-ruleset.js';

export interface NftApi {
  /** Runs one batch as a single transaction; rejects with nft's message when the kernel refuses it. */
  apply(batch: NftBatch): Promise<void>;
  /** `nft -j list table inet conndrain` as JSON, or undefined when the table does not exist. */
  listTable(): Promise<unknown>;
}

export interface NftOptions {
  /** The nft binary (default `nft`, from PATH). */
  binary?: string;
  /** Command words put before the binary, e.g. ['ip', 'netns', 'exec', 'ns1']. */
  prefix?: readonly string[];
  timeoutMs?: number;
}

export class NftError extends Error {
  constructor(message: string, readonly exitCode: number | null, readonly stderr: string) {
    super(message);
    this.name = 'NftError';
  }
}

function run(options: NftOptions, args: readonly string[]): Promise<string> {
  const words = [...(options.prefix ?? []), options.binary ?? 'nft', ...args];
  return new Promise((resolve, reject) => {
    // stdin is not used: writing to a child that already exited raises EPIPE on its stdin stream.
    const child = spawn(words[0] ?? 'nft', words.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timeoutMs = options.timeoutMs ?? 30_000;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new NftError(`cannot run ${words.join(' ')}: ${error.message}`, null, ''));
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(stdout);
      else if (timedOut) reject(new NftError(`${words.join(' ')} killed after ${timeoutMs} ms`, code, stderr));
      else reject(new NftError(`${words.join(' ')} exited ${String(code)}: ${stderr.trim()}`, code, stderr));
    });
  });
}

function hasTable(listing: unknown): boolean {
  if (typeof listing !== 'object' || listing === null) return false;
  const items = (listing as { nftables?: unknown }).nftables;
  if (!Array.isArray(items)) return false;
  return items.some((item) => {
    const table = (item as { table?: { family?: unknown; name?: unknown } } | null)?.table;
    return table?.family === NFT_FAMILY && table.name === NFT_TABLE;
  });
}

export function createNft(options: NftOptions = {}): NftApi {
  return {
    async apply(batch) {
      const dir = await mkdtemp(join(tmpdir(), 'conndrain-nft-'));
      try {
        const file = join(dir, 'batch.json');
        await writeFile(file, JSON.stringify(batch), { mode: 0o600 });
        await run(options, ['-j', '-f', file]);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
    async listTable() {
      // Ask which tables exist first (JSON), so a missing table is not told by an error text.
      const tables = JSON.parse(await run(options, ['-j', 'list', 'tables', NFT_FAMILY])) as unknown;
      if (!hasTable(tables)) return undefined;
      return JSON.parse(await run(options, ['-j', 'list', 'table', NFT_FAMILY, NFT_TABLE])) as unknown;
    },
  };
}
