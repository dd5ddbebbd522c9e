/**
 * The C addon's layers (native/src/README.md): a file includes only its own layer and the ones
 * below it (napi -> ops -> wire), only napi/ sees N-API, and binding.gyp compiles exactly the
 * .c files of the three folders.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { it } from 'node:test';

const NATIVE = new URL('..', import.meta.url).pathname;
const SRC = join(NATIVE, 'src');
/** Bottom first: a layer may include the ones before it. */
const LAYERS = ['wire', 'ops', 'napi'];

function sourcesOf(layer: string): string[] {
  return readdirSync(join(SRC, layer)).filter((f) => /\.[ch]$/.test(f)).map((f) => `${layer}/${f}`);
}

const FILES = LAYERS.flatMap(sourcesOf);

/** The layer's rank (-1: no layer) of `wire/netlink.h`. */
function rankOf(path: string): number {
  return LAYERS.indexOf(path.slice(0, path.indexOf('/')));
}

it('src/ holds the three layer folders and its README, nothing else', () => {
  assert.deepEqual(readdirSync(SRC).sort(), ['README.md', ...LAYERS].sort());
});

it('every include names its layer, and no layer includes one above it', () => {
  const wrong: string[] = [];
  for (const file of FILES) {
    for (const [, target = ''] of readFileSync(join(SRC, file), 'utf8').matchAll(/^#include "([^"]+)"/gm)) {
      const rank = rankOf(target);
      if (rank < 0 || rank > rankOf(file) || !FILES.includes(target)) wrong.push(`${file} -> ${target}`);
    }
  }
  assert.deepEqual(wrong, []);
});

it('only napi/ includes node_api.h', () => {
  const outside = FILES.filter((f) => !f.startsWith('napi/') && /#include <node_api\.h>/.test(readFileSync(join(SRC, f), 'utf8')));
  assert.deepEqual(outside, []);
});

it('binding.gyp compiles exactly the .c files of the layers', () => {
  const gyp = readFileSync(join(NATIVE, 'binding.gyp'), 'utf8');
  const listed = [...gyp.matchAll(/"src\/([^"]+\.c)"/g)].map(([, f = '']) => f).sort();
  assert.deepEqual(listed, FILES.filter((f) => f.endsWith('.c')).sort());
});
