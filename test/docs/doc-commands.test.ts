import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findDocCommands, splitShellWords } from './doc-commands.js';

describe('findDocCommands', () => {
  it('reads fenced and indented blocks, prompts and their output, continuations, pipes and comments', () => {
    const page = [
      '# Title', '',
      'Run `conndrain doctor --json` on a node.', '',
      '```sh',
      'conndrain inject -f a.yaml | kubectl apply -f -   # apply it',
      'npm run lab -- \\',
      '  ghost --json',
      '```', '',
      '    $ conndrain review < review.json',
      '    {"response": 1}',
      '    $ FOO=1 sudo conndrain --version && echo ok',
      '',
    ].join('\n');
    assert.deepEqual(findDocCommands(page).map((c) => [c.line, c.words]), [
      [3, ['conndrain', 'doctor', '--json']],
      [6, ['conndrain', 'inject', '-f', 'a.yaml']],
      [6, ['kubectl', 'apply', '-f', '-']],
      [7, ['npm', 'run', 'lab', '--', 'ghost', '--json']],
      [11, ['conndrain', 'review']],
      [13, ['FOO=1', 'sudo', 'conndrain', '--version']],
      [13, ['echo', 'ok']],
    ]);
  });

  it('splits words the way a shell does', () => {
    assert.deepEqual(splitShellWords(`a 'b c' "d \\"e\\"" f\\ g x#y # comment`), ['a', 'b c', 'd "e"', 'f g', 'x#y']);
    assert.deepEqual(splitShellWords('cmd <arg> 2>&1 >out'), ['cmd', '<arg>', '>', '1', '>', 'out']);
    assert.equal(splitShellWords(`echo 'open`), undefined);
  });
});
