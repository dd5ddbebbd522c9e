/**
 * Golden tests: every file in test/fixtures/webhook is an admission input (object, kind,
 * operation, config overrides) with the expected answer (allowed, status, warnings, reason and
 * the decoded JSON patch). The real admission path (handleAdmission with DrainHookInjection)
 * produces the answer; the patched object must validate against the Kubernetes schema, and a
 * second pass over it must change nothing.
 * `UPDATE_GOLDEN=1 node test/run.mjs golden` rewrites the expected parts (review the diff!).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fastJsonPatch from 'fast-json-patch';
import { DEFAULT_INJECT_CONFIG, type InjectConfig } from '../../src/config/webhook.js';
import { seededRandom } from '../../src/inject/index.js';
import { DrainHookInjection } from '../../webhook/admission/drain-hook.js';
import { resultOf } from '../../webhook/admission/answer.js';
import { handleAdmission } from '../../webhook/admission/handler.js';
import type { AdmissionRequest } from '../../webhook/admission/types.js';
import { encodeReview } from '../../webhook/http/review.js';
import { assertSleepWithinGrace, validateKubernetesObject } from './schema.js';

const DIR = new URL('../fixtures/webhook/', import.meta.url).pathname;
const UPDATE = process.env.UPDATE_GOLDEN === '1';

interface Fixture {
  description: string;
  kind: string;
  operation: string;
  config?: Partial<InjectConfig>;
  object: Record<string, unknown>;
  expected?: unknown;
}

const GROUPS: Record<string, string> = { Deployment: 'apps', StatefulSet: 'apps', DaemonSet: 'apps', ReplicaSet: 'apps', Job: 'batch', CronJob: 'batch' };

function requestFor(f: Fixture, object: unknown): AdmissionRequest {
  const group = GROUPS[f.kind] ?? '';
  return {
    uid: 'b5f0e8a4-golden',
    kind: { group, version: 'v1', kind: f.kind },
    resource: { group, version: 'v1', resource: `${f.kind.toLowerCase()}s` },
    namespace: 'shop',
    operation: f.operation,
    object,
  };
}

function decodePatch(patch: string | undefined): fastJsonPatch.Operation[] | undefined {
  return patch === undefined ? undefined : JSON.parse(Buffer.from(patch, 'base64').toString('utf8')) as fastJsonPatch.Operation[];
}

const files = readdirSync(DIR).filter((f) => f.endsWith('.json')).sort();

test('the golden folder has fixtures', () => assert.ok(files.length >= 30, `${files.length} fixtures`));

for (const file of files) {
  test(`golden ${file.replace(/\.json$/, '')}`, () => {
    const path = join(DIR, file);
    const fixture = JSON.parse(readFileSync(path, 'utf8')) as Fixture;
    const config = { ...DEFAULT_INJECT_CONFIG, ...fixture.config };
    const before = structuredClone(fixture.object);
    const answer = handleAdmission(new DrainHookInjection({ config, random: seededRandom(7) }), requestFor(fixture, fixture.object));
    // What the API server reads: the answer as the HTTP edge encodes it.
    const { response } = encodeReview(answer);
    assert.deepEqual(fixture.object, before, 'the handler must not modify its input');
    assert.equal(response.uid, 'b5f0e8a4-golden');
    const patch = decodePatch(response.patch);
    const actual = {
      allowed: response.allowed,
      result: resultOf(answer),
      reason: answer.reason,
      ...(response.status ? { status: response.status } : {}),
      warnings: response.warnings ?? [],
      patch: patch ?? null,
    };
    if (UPDATE) {
      writeFileSync(path, `${JSON.stringify({ ...fixture, expected: actual }, null, 2)}\n`);
      return;
    }
    assert.deepEqual(actual, fixture.expected, `${file}: ${fixture.description}`);

    // The emitted object validates against the real schema, and the sleep never exceeds grace.
    const patched = patch === undefined
      ? structuredClone(fixture.object)
      : fastJsonPatch.applyPatch(structuredClone(fixture.object), patch, true, false).newDocument;
    if (fixture.kind !== 'ConfigMap') validateKubernetesObject(fixture.kind, patched);
    if (fixture.kind === 'Pod') assertSleepWithinGrace(patched['spec'] as never);

    // Reinvocation: a second pass over the output changes nothing.
    const again = handleAdmission(new DrainHookInjection({ config, random: seededRandom(99) }), requestFor(fixture, patched));
    assert.deepEqual(again.patch, [], 'second pass must not patch');
    assert.equal(again.allowed, answer.allowed);
  });
}
