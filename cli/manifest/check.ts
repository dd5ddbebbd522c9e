/**
 * What `inject` refuses before it rewrites anything (exit 2, one line, nothing written):
 * input that is not Kubernetes objects. An empty input, a bare scalar or sequence, or a
 * mapping without apiVersion and kind would otherwise pass through unchanged with exit 0 and
 * look like a manifest with nothing to inject. A YAML or JSON syntax error is reported the way
 * compilers report them, `FILE:LINE:COL: message`, so an editor can jump to it.
 */
import { isScalar, LineCounter, parseAllDocuments, type Document } from 'yaml';
import { looksLikeJson } from '../../src/inject/json.js';
import { CliExit } from '../exit.js';
import { jsonErrorOffset } from './json-error-offset.js';
import type { ManifestInput } from './input.js';
import { USAGE_EXIT } from '../usage-error.js';

interface Position {
  line: number;
  col: number;
}

function refuse(input: ManifestInput, at: Position | undefined, message: string): CliExit {
  return new CliExit(USAGE_EXIT, `${input.name}${at === undefined ? '' : `:${at.line}:${at.col}`}: ${message}`);
}

/** Why `value` (a parsed document or JSON item) is not a Kubernetes object, or undefined. */
function notAnObject(value: unknown): string | undefined {
  if (value === null || value === undefined) return 'not a Kubernetes object: the document is empty';
  if (Array.isArray(value)) return 'not a Kubernetes object: a sequence, expected a mapping with apiVersion and kind';
  if (typeof value !== 'object') return `not a Kubernetes object: a bare ${typeof value}, expected a mapping with apiVersion and kind`;
  const record = value as Record<string, unknown>;
  const missing = ['apiVersion', 'kind'].filter((key) => typeof record[key] !== 'string' || record[key] === '');
  if (missing.length > 0) return `not a Kubernetes object: no ${missing.join(' and no ')}`;
  return undefined;
}

/** The first line of a yaml error message, without its ` at line L, column C:` and the excerpt. */
function yamlMessage(message: string): string {
  return (message.split('\n')[0] ?? message).replace(/ at line \d+, column \d+:?$/, '').replace(/:$/, '');
}

/** Where a JSON.parse error is: its `position N` (newer Node versions say so), else found here. */
function jsonErrorAt(text: string, message: string, lines: LineCounter): Position {
  const position = /at position (\d+)/.exec(message)?.[1];
  return lines.linePos(position !== undefined ? Number(position) : jsonErrorOffset(text) ?? text.length);
}

/** JSON.parse's message as one line: without the quoted input newer Node versions append. */
function jsonMessage(message: string): string {
  return (message.split('\n')[0] ?? message).replace(/, (?:\.\.\.)?".*$/, '').replace(/ in JSON at position \d+.*$/, '');
}

/** Line starts of `text`, for offsets -> line and column. */
function countLines(text: string): LineCounter {
  const lines = new LineCounter();
  lines.addNewLine(0);
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lines.addNewLine(i + 1);
  return lines;
}

function checkJson(input: ManifestInput): void {
  const lines = countLines(input.text);
  let parsed: unknown;
  try {
    parsed = JSON.parse(input.text);
  } catch (error) {
    const message = (error as Error).message;
    throw refuse(input, jsonErrorAt(input.text, message, lines), `invalid JSON: ${jsonMessage(message)}`);
  }
  const items = Array.isArray(parsed) ? parsed : [parsed];
  if (items.length === 0) throw refuse(input, { line: 1, col: 1 }, 'no Kubernetes object: an empty JSON array');
  items.forEach((item, index) => {
    const why = notAnObject(item);
    if (why !== undefined) throw refuse(input, { line: 1, col: 1 }, Array.isArray(parsed) ? `item ${index + 1}: ${why}` : why);
  });
}

/** Nothing between two `---`, or comments only: no node, or an empty plain scalar (not `~` or `null`). */
function isEmpty(doc: Document): boolean {
  const contents = doc.contents;
  return contents === null || (isScalar(contents) && contents.value === null && contents.range?.[0] === contents.range?.[1]);
}

function checkYaml(input: ManifestInput): void {
  const lines = new LineCounter();
  const docs = parseAllDocuments(input.text, { lineCounter: lines });
  if (!Array.isArray(docs)) throw refuse(input, undefined, 'no Kubernetes object: the input is empty');
  for (const doc of docs) {
    const error = doc.errors[0];
    if (error !== undefined) throw refuse(input, error.linePos?.[0] ?? lines.linePos(error.pos[0]), `invalid YAML: ${yamlMessage(error.message)}`);
  }
  // Documents of comments alone, or an empty one between two `---`, are skipped as kubectl does.
  const objects = docs.filter((doc) => !isEmpty(doc));
  if (objects.length === 0) throw refuse(input, undefined, 'no Kubernetes object: the input is empty');
  for (const doc of objects) {
    const contents = doc.contents;
    const at = lines.linePos(contents?.range[0] ?? 0);
    const why = notAnObject(doc.toJS());
    if (why !== undefined) throw refuse(input, at, why);
  }
}

/** Throws a usage error (CliExit 2, one line) unless `input` is one or more Kubernetes objects. */
export function checkManifest(input: ManifestInput): void {
  if (input.text.trim() === '') throw refuse(input, undefined, 'no Kubernetes object: the input is empty');
  if (looksLikeJson(input.text)) checkJson(input);
  else checkYaml(input);
}
