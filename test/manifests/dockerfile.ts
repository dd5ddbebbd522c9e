/**
 * A small Dockerfile reader for the image tests (no Docker engine runs here): stages, their
 * instructions with line continuations joined, COPY sources and destinations resolved against
 * WORKDIR, and .dockerignore matching.
 */
import { posix } from 'node:path';

export interface Instruction {
  keyword: string;
  args: string;
  line: number;
}

export interface CopyInstruction {
  from: string | undefined;
  sources: string[];
  /** Absolute destination of each source (dest dir + basename, or the dest itself for one source). */
  targets: string[];
  line: number;
}

export interface Stage {
  name: string;
  base: string;
  instructions: Instruction[];
}

/** Splits a Dockerfile into stages; comments and parser directives are dropped. */
export function parseDockerfile(text: string): Stage[] {
  const stages: Stage[] = [];
  const lines = text.split('\n');
  let pending = '';
  let start = 0;
  lines.forEach((raw, index) => {
    const line = raw.trim();
    if (pending === '' && (line === '' || line.startsWith('#'))) return;
    if (pending === '') start = index + 1;
    if (line.startsWith('#')) return;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      return;
    }
    const full = (pending + line).trim();
    pending = '';
    const match = /^(\w+)\s+(.*)$/s.exec(full);
    if (match?.[1] === undefined || match[2] === undefined) throw new Error(`line ${start}: cannot read "${full}"`);
    const keyword = match[1].toUpperCase();
    if (keyword === 'FROM') {
      const from = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(match[2]);
      if (from?.[1] === undefined) throw new Error(`line ${start}: cannot read FROM ${match[2]}`);
      stages.push({ name: from[2] ?? String(stages.length), base: from[1], instructions: [] });
      return;
    }
    const stage = stages.at(-1);
    if (stage === undefined) throw new Error(`line ${start}: ${keyword} before FROM`);
    stage.instructions.push({ keyword, args: match[2], line: start });
  });
  return stages;
}

/** The exec-form (JSON array) or shell-form words of an instruction. */
export function wordsOf(args: string): string[] {
  const trimmed = args.trim();
  if (trimmed.startsWith('[')) return JSON.parse(trimmed) as string[];
  return trimmed.split(/\s+/);
}

/** The COPY instructions of a stage, with destinations made absolute against WORKDIR. */
export function copiesOf(stage: Stage): CopyInstruction[] {
  let workdir = '/';
  const copies: CopyInstruction[] = [];
  for (const instruction of stage.instructions) {
    if (instruction.keyword === 'WORKDIR') workdir = posix.resolve(workdir, instruction.args.trim());
    if (instruction.keyword !== 'COPY' && instruction.keyword !== 'ADD') continue;
    const words = wordsOf(instruction.args);
    const flags = words.filter((w) => w.startsWith('--'));
    const paths = words.filter((w) => !w.startsWith('--'));
    const dest = paths.pop() ?? '';
    const destAbs = posix.resolve(workdir, dest);
    const isDir = dest.endsWith('/') || paths.length > 1;
    const from = flags.find((f) => f.startsWith('--from='))?.slice('--from='.length);
    copies.push({
      from,
      sources: paths,
      targets: paths.map((p) => (isDir ? posix.join(destAbs, posix.basename(p)) : destAbs)),
      line: instruction.line,
    });
  }
  return copies;
}

/** The WORKDIR in effect at an instruction of a stage. */
export function workdirAt(stage: Stage, instruction: Instruction): string {
  let workdir = '/';
  for (const i of stage.instructions) {
    if (i === instruction) break;
    if (i.keyword === 'WORKDIR') workdir = posix.resolve(workdir, i.args.trim());
  }
  return workdir;
}

function globToRegExp(pattern: string): RegExp {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] ?? '';
    if (c === '*' && pattern[i + 1] === '*') {
      out += '.*';
      i++;
      if (pattern[i + 1] === '/') i++;
    } else if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else out += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${out}$`);
}

/** Whether .dockerignore keeps `path` (relative to the context) out of the build context. */
export function isIgnored(path: string, dockerignore: string): boolean {
  const rules = dockerignore.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
  const parts = posix.normalize(path).split('/');
  const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
  let ignored = false;
  for (const rule of rules) {
    const negated = rule.startsWith('!');
    const pattern = globToRegExp(posix.normalize((negated ? rule.slice(1) : rule).replace(/^\//, '')));
    if (prefixes.some((p) => pattern.test(p))) ignored = !negated;
  }
  return ignored;
}
