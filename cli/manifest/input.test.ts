/** The inputs `inject -f` reads, as kubectl reads them (cli/manifest/input.ts). */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { CliExit } from '../exit.js';
import { decodeManifest, readManifestInputs } from './input.js';

const WHO = 'conndrain inject';

async function refusal(work: () => Promise<unknown>): Promise<string> {
  try {
    await work();
  } catch (error) {
    assert.ok(error instanceof CliExit, String(error));
    assert.equal(error.exitCode, 2);
    return error.message;
  }
  return assert.fail('not refused');
}

describe('readManifestInputs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cdinput-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const write = (path: string, text: string): string => {
    const full = join(dir, path);
    mkdirSync(join(full, '..'), { recursive: true });
    writeFileSync(full, text);
    return full;
  };
  const a = write('tree/b.yaml', 'b');
  write('tree/a.yml', 'a');
  write('tree/c.JSON', 'c');
  write('tree/notes.txt', 'not read');
  write('tree/sub/d.yaml', 'd');
  write('tree/sub/deeper/e.json', 'e');
  mkdirSync(join(dir, 'empty/sub'), { recursive: true });
  write('empty/sub/x.yaml', 'x');

  it('keeps every -f, in the order given', async () => {
    const inputs = await readManifestInputs([join(dir, 'tree/sub/d.yaml'), a], false, WHO);
    assert.deepEqual(inputs.map((i) => i.text), ['d', 'b']);
  });

  it('reads a directory\'s .yaml, .yml and .json files in name order, not its subdirectories', async () => {
    const inputs = await readManifestInputs([join(dir, 'tree')], false, WHO);
    assert.deepEqual(inputs.map((i) => i.text), ['a', 'b', 'c']);
    assert.equal(inputs[0]?.name, join(dir, 'tree/a.yml'));
  });

  it('recurses with -R', async () => {
    const inputs = await readManifestInputs([join(dir, 'tree')], true, WHO);
    assert.deepEqual(inputs.map((i) => i.text), ['a', 'b', 'c', 'd', 'e']);
  });

  it('refuses a directory with nothing to read, saying -R would look deeper', async () => {
    assert.equal(await refusal(() => readManifestInputs([join(dir, 'empty')], false, WHO)), `${WHO}: ${join(dir, 'empty')}: no .yaml, .yml or .json files in the directory (-R reads its subdirectories)`);
    assert.equal((await readManifestInputs([join(dir, 'empty')], true, WHO)).length, 1);
  });

  it('refuses a missing file, naming the command', async () => {
    assert.match(await refusal(() => readManifestInputs([join(dir, 'nope.yaml')], false, WHO)), /^conndrain inject: cannot read .*nope\.yaml: ENOENT/);
  });

  it('refuses stdin twice before reading anything', async () => {
    assert.equal(await refusal(() => readManifestInputs([a, '-', '-'], false, WHO)), `${WHO}: -f - (stdin) given more than once`);
  });
});

describe('decodeManifest', () => {
  it('passes UTF-8 text', () => {
    assert.equal(decodeManifest('x', Buffer.from('name: café\n')), 'name: café\n');
  });

  it('refuses NUL bytes and invalid UTF-8 as binary', () => {
    for (const bytes of [Buffer.from([0x61, 0x00, 0x62]), Buffer.from([0xff, 0xfe, 0x41]), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01, 0x00])]) {
      assert.throws(() => decodeManifest('x.yaml', bytes), (error: unknown) => error instanceof CliExit && error.exitCode === 2 && error.message === 'x.yaml: binary input, not YAML or JSON');
    }
  });
});
