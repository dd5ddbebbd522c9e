import fastJsonPatch from 'fast-json-patch';
import { isMap, isSeq, parseAllDocuments, type Document } from 'yaml';
import type { InjectConfig } from '../../src/config/webhook.js';
import { looksLikeJson } from '../../src/inject/json.js';
import { displayName, injectPod, injectWorkload, isWorkloadKind, type RandomSource } from '../../src/inject/index.js';

/** What `conndrain inject` produced: the rewritten text and one line per resource for stderr. */
export interface ManifestResult {
  output: string;
  messages: string[];
  injected: number;
  invalid: number;
}

/** A problem with the input itself (unparseable YAML/JSON): nothing is written. */
export class ManifestError extends Error {
  override name = 'ManifestError';
}

interface Rewritten {
  object: unknown;
  changed: boolean;
  invalid: boolean;
  messages: string[];
}

function nameOf(object: Record<string, unknown>): string {
  const meta = object['metadata'];
  const name = typeof meta === 'object' && meta !== null ? displayName(meta as Record<string, unknown>) : '<unnamed>';
  return `${typeof object['kind'] === 'string' ? object['kind'].toLowerCase() : 'object'}/${name}`;
}

/** One Kubernetes object (or a List of them): Pods and workloads rewritten, everything else untouched. */
function rewriteObject(object: unknown, config: InjectConfig, random: RandomSource): Rewritten {
  if (typeof object !== 'object' || object === null || Array.isArray(object)) return { object, changed: false, invalid: false, messages: [] };
  const record = object as Record<string, unknown>;
  const kind = record['kind'];
  if (kind === 'List' && Array.isArray(record['items'])) {
    const items = record['items'].map((item) => rewriteObject(item, config, random));
    const changed = items.some((i) => i.changed);
    return { object: changed ? { ...record, items: items.map((i) => i.object) } : object, changed, invalid: items.some((i) => i.invalid), messages: items.flatMap((i) => i.messages) };
  }
  if (kind === 'Pod') {
    const result = injectPod(object, config, random);
    const who = nameOf(record);
    const messages = result.warnings.map((w) => w.replace(/^conndrain: /, `conndrain: ${who}: `));
    if (result.changed) messages.push(`conndrain: ${who}: drain hook injected (${result.hook ?? '?'} on ${result.hooked.join(', ')})`);
    return { object: result.pod, changed: result.changed, invalid: result.problems.length > 0, messages };
  }
  if (isWorkloadKind(kind)) {
    const result = injectWorkload(object, kind, config, random);
    const messages = [...result.warnings];
    if (result.changed) messages.push(`conndrain: ${nameOf(record)}: drain hook injected into the pod template`);
    return { object: result.object, changed: result.changed, invalid: result.problems.length > 0, messages };
  }
  return { object, changed: false, invalid: false, messages: [] };
}

function segmentsOf(pointer: string): string[] {
  return pointer.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** Applies JSON patch operations to a YAML document in place, so comments and layout elsewhere survive. */
function patchDocument(doc: Document, operations: fastJsonPatch.Operation[]): void {
  for (const op of operations) {
    const raw = segmentsOf(op.path);
    // Walk the document to know, per segment, whether it indexes a sequence or keys a map.
    const path: Array<string | number> = [];
    for (const segment of raw) {
      const parent = path.length === 0 ? doc.contents : doc.getIn(path, true);
      path.push(isSeq(parent) ? Number(segment) : segment);
    }
    if (op.op === 'remove') doc.deleteIn(path);
    else if (op.op === 'add' || op.op === 'replace') {
      const parentPath = path.slice(0, -1);
      const parent = parentPath.length === 0 ? doc.contents : doc.getIn(parentPath, true);
      const last = path[path.length - 1];
      if (op.op === 'add' && isSeq(parent) && typeof last === 'number') parent.items.splice(last, 0, doc.createNode(op.value));
      else if (isMap(parent) || isSeq(parent) || parentPath.length === 0) doc.setIn(path, doc.createNode(op.value));
    } else {
      throw new ManifestError(`internal: unexpected patch operation ${op.op}`);
    }
  }
}

/** YAML with block sequences at the same indentation as their key (kubectl's style)? */
function sequencesUnindented(text: string): boolean {
  return /^( *)[^ \n#-][^\n]*:[ \t]*\n\1- /m.test(text);
}

/**
 * Rewrites manifests the way the webhook would mutate them: Pods get the drain hook (with a
 * drain-id), Deployments/StatefulSets/DaemonSets/ReplicaSets/Jobs/CronJobs get it in their pod
 * template, everything else passes through byte for byte. YAML (multi-document) or JSON.
 */
export function injectManifests(text: string, config: InjectConfig, random: RandomSource): ManifestResult {
  if (looksLikeJson(text)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new ManifestError(`input is not valid JSON: ${(error as Error).message}`);
    }
    const items = Array.isArray(parsed) ? parsed : [parsed];
    const results = items.map((item) => rewriteObject(item, config, random));
    const changed = results.some((r) => r.changed);
    const object = Array.isArray(parsed) ? results.map((r) => r.object) : results[0]?.object;
    return {
      output: changed ? `${JSON.stringify(object, null, 2)}\n` : text,
      messages: results.flatMap((r) => r.messages),
      injected: results.filter((r) => r.changed).length,
      invalid: results.filter((r) => r.invalid).length,
    };
  }

  const docs = parseAllDocuments(text);
  if (!Array.isArray(docs)) throw new ManifestError('input is not YAML');
  const problems = docs.flatMap((doc, i) => doc.errors.map((e) => `document ${i + 1}: ${e.message}`));
  if (problems.length > 0) throw new ManifestError(`input is not valid YAML: ${problems.join('; ')}`);

  const indentSeq = !sequencesUnindented(text);
  let output = '';
  let previousEnd = 0;
  let injected = 0;
  let invalid = 0;
  const messages: string[] = [];
  docs.forEach((doc, index) => {
    const end = doc.range[2];
    const original = text.slice(previousEnd, end);
    previousEnd = end;
    const before: unknown = doc.toJS();
    const result = rewriteObject(before, config, random);
    messages.push(...result.messages);
    if (result.invalid) invalid++;
    if (!result.changed) {
      output += original;
      return;
    }
    injected++;
    patchDocument(doc, fastJsonPatch.compare(before as object, result.object as object));
    // Untouched flow collections keep the common `[a, b]` spelling (the library pads them by default).
    let rendered = doc.toString({ indentSeq, flowCollectionPadding: false });
    if (index > 0 && !rendered.startsWith('---')) rendered = `---\n${rendered}`;
    if (output !== '' && !output.endsWith('\n')) output += '\n';
    output += rendered;
  });
  output += text.slice(previousEnd);
  return { output, messages, injected, invalid };
}
