/** What `inject` refuses before it rewrites anything, and how it says where (cli/manifest/check.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CliExit } from '../exit.js';
import { jsonErrorOffset } from './json-error-offset.js';
import { checkManifest } from './check.js';

/** The one line `checkManifest` refuses `text` with, or 'ok'. */
function verdict(text: string, name = 'in.yaml'): string {
  try {
    checkManifest({ name, text });
    return 'ok';
  } catch (error) {
    assert.ok(error instanceof CliExit, String(error));
    assert.equal(error.exitCode, 2);
    assert.doesNotMatch(error.message, /\n/);
    return error.message;
  }
}

describe('checkManifest', () => {
  const cases: Array<[string, string, string]> = [
    ['a Pod', 'apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n', 'ok'],
    ['objects with empty documents and comments between', '---\napiVersion: v1\nkind: Pod\n---\n# only a comment\n---\napiVersion: v1\nkind: Service\n', 'ok'],
    ['a JSON List', '{"apiVersion": "v1", "kind": "List", "items": []}', 'ok'],
    ['a JSON array of objects', '[{"apiVersion": "v1", "kind": "Pod"}]', 'ok'],
    ['an empty file', '', 'in.yaml: no Kubernetes object: the input is empty'],
    ['whitespace', ' \n\n', 'in.yaml: no Kubernetes object: the input is empty'],
    ['comments only', '# nothing\n---\n', 'in.yaml: no Kubernetes object: the input is empty'],
    ['a bare scalar', 'hello\n', 'in.yaml:1:1: not a Kubernetes object: a bare string, expected a mapping with apiVersion and kind'],
    ['a number', '42\n', 'in.yaml:1:1: not a Kubernetes object: a bare number, expected a mapping with apiVersion and kind'],
    ['a sequence', '- a\n', 'in.yaml:1:1: not a Kubernetes object: a sequence, expected a mapping with apiVersion and kind'],
    ['no kind', 'apiVersion: v1\nmetadata: {}\n', 'in.yaml:1:1: not a Kubernetes object: no kind'],
    ['the second document without either', 'apiVersion: v1\nkind: Pod\n---\nfoo: bar\n', 'in.yaml:4:1: not a Kubernetes object: no apiVersion and no kind'],
    ['an explicit null document', 'apiVersion: v1\nkind: Pod\n---\n~\n', 'in.yaml:4:1: not a Kubernetes object: the document is empty'],
    ['a YAML syntax error', 'apiVersion: v1\nkind: Pod\nspec: [1, 2\nx: y\n', 'in.yaml:4:1: invalid YAML: Flow sequence in block collection must be sufficiently indented and end with a ]'],
    ['a tab indent', 'a:\n\tb: c\n', 'in.yaml:2:1: invalid YAML: Tabs are not allowed as indentation'],
    ['a JSON error', '{\n  "apiVersion": "v1",\n  "kind": }\n', 'in.yaml:3:11: invalid JSON: '],
    ['truncated JSON', '{"apiVersion": "v1"', 'in.yaml:1:20: invalid JSON: '],
    ['an empty JSON array', '[]', 'in.yaml:1:1: no Kubernetes object: an empty JSON array'],
    ['a JSON array with a number', '[{"apiVersion": "v1", "kind": "Pod"}, 1]', 'in.yaml:1:1: item 2: not a Kubernetes object: a bare number, expected a mapping with apiVersion and kind'],
  ];
  for (const [name, text, expected] of cases) {
    it(name, () => {
      const got = verdict(text);
      // JSON.parse's wording differs between Node versions: only the place and the kind are fixed.
      if (expected.endsWith('invalid JSON: ')) assert.ok(got.startsWith(expected) && got.length > expected.length, got);
      else assert.equal(got, expected);
    });
  }
});

describe('jsonErrorOffset', () => {
  it('is undefined for valid JSON, and JSON.parse agrees', () => {
    for (const text of ['{}', ' [1, -2.5e3, "a\\u00e9\\n", true, false, null, {"k": [ ]}] ', '"s"', '0']) {
      assert.equal(jsonErrorOffset(text), undefined, text);
      assert.doesNotThrow(() => JSON.parse(text) as unknown);
    }
  });

  it('points at the first character JSON.parse rejects', () => {
    const cases: Array<[string, number]> = [['{"a": }', 6], ['{"a" 1}', 5], ['[1,]', 3], ['[1 2]', 3], ['{a: 1}', 1], ['"tab\there"', 0], ['01', 1], ['{"a": 1} x', 9], ['[', 1], ['', 0]];
    for (const [text, offset] of cases) {
      assert.equal(jsonErrorOffset(text), offset, text);
      assert.throws(() => JSON.parse(text) as unknown);
    }
  });
});
