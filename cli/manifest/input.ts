/**
 * The manifests `inject` reads, as kubectl reads `-f`: each `-f` in the order given, `-` for
 * stdin (once), a directory's .yaml, .yml and .json files in name order (its subdirectories
 * too with `-R`). Text only: input that is not UTF-8 text is refused before any parsing, so a
 * binary file gets one clear line instead of a YAML error about its bytes.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { CliExit } from '../exit.js';
import { USAGE_EXIT } from '../usage-error.js';

/** One input: its name in messages (the path, or `<stdin>`) and its text. */
export interface ManifestInput {
  readonly name: string;
  readonly text: string;
}

export const STDIN_NAME = '<stdin>';

/** The extensions a directory's files need to be read, as kubectl's. */
const MANIFEST_EXTENSIONS = new Set(['.yaml', '.yml', '.json']);

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The bytes as text, or a usage error naming the input: NUL bytes or invalid UTF-8 are binary. */
export function decodeManifest(name: string, bytes: Buffer): string {
  const binary = `${name}: binary input, not YAML or JSON`;
  if (bytes.includes(0)) throw new CliExit(USAGE_EXIT, binary);
  try {
    return utf8.decode(bytes);
  } catch {
    throw new CliExit(USAGE_EXIT, binary);
  }
}

/** Every byte of stdin. */
export async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The manifest files under `dir`, sorted by name; subdirectories only when `recursive`. */
async function listDirectory(dir: string, recursive: boolean): Promise<string[]> {
  const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const files: string[] = [];
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (recursive) files.push(...(await listDirectory(path, true)));
    } else if (MANIFEST_EXTENSIONS.has(extname(entry.name).toLowerCase())) {
      files.push(path);
    }
  }
  return files;
}

async function readManifestFile(path: string, who: string): Promise<ManifestInput> {
  try {
    return { name: path, text: decodeManifest(path, await readFile(path)) };
  } catch (error) {
    if (error instanceof CliExit) throw error;
    throw new CliExit(USAGE_EXIT, `${who}: cannot read ${path}: ${(error as Error).message}`);
  }
}

/**
 * Every input the `-f` values name, in order; a usage error (exit 2) for what cannot be read,
 * which names the command (`who`), or the input when it is the input's fault (binary).
 */
export async function readManifestInputs(filenames: readonly string[], recursive: boolean, who: string): Promise<ManifestInput[]> {
  if (filenames.filter((filename) => filename === '-').length > 1) throw new CliExit(USAGE_EXIT, `${who}: -f - (stdin) given more than once`);
  const inputs: ManifestInput[] = [];
  for (const filename of filenames.length === 0 ? ['-'] : filenames) {
    if (filename === '-') {
      inputs.push({ name: STDIN_NAME, text: decodeManifest(STDIN_NAME, await readStdin()) });
      continue;
    }
    let isDirectory: boolean;
    try {
      isDirectory = (await stat(filename)).isDirectory();
    } catch (error) {
      throw new CliExit(USAGE_EXIT, `${who}: cannot read ${filename}: ${(error as Error).message}`);
    }
    if (!isDirectory) {
      inputs.push(await readManifestFile(filename, who));
      continue;
    }
    const files = await listDirectory(filename, recursive);
    if (files.length === 0) throw new CliExit(USAGE_EXIT, `${who}: ${filename}: no .yaml, .yml or .json files in the directory${recursive ? ' or under it' : ' (-R reads its subdirectories)'}`);
    for (const file of files) inputs.push(await readManifestFile(file, who));
  }
  return inputs;
}
