/**
 * The lab stays out of what ships: the program `npm run build` compiles (tsconfig.build.json,
 * what the images build) reaches no file under lab/, test/ or bench/, so the images copy none
 * of them. `conndrain lab` and `conndrain demo` load the lab at run time from a checkout.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('..', import.meta.url));

function buildProgramFiles(): string[] {
  const configPath = join(root, 'tsconfig.build.json');
  const config = ts.readConfigFile(configPath, (path) => ts.sys.readFile(path));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root, undefined, configPath);
  const program = ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options });
  return program.getSourceFiles().map((file) => file.fileName).filter((name) => !name.includes('/node_modules/'));
}

describe('the production build', () => {
  it('compiles the CLI without reaching lab/, test/ or bench/', () => {
    const files = buildProgramFiles();
    assert.ok(files.some((name) => name.endsWith('/cli/commands/lab.ts')), 'the CLI and its lab commands are in the program');
    const leaked = files.filter((name) => /^(lab|test|bench)\//.test(name.slice(root.length)));
    assert.deepEqual(leaked, []);
  });
});
