#!/usr/bin/env node
'use strict';
// The `conndrain` command (package.json "bin"). CommonJS, so that a help or version request is
// answered from the build's table with no ES module loaded (bin/fast-answers.cjs); every
// other request goes to the ES module launcher bin/conndrain.mjs, which runs the compiled
// CLI (dist/cli/main.js), or the TypeScript through tsx in a checkout that is not built.
if (!require('./fast-answers.cjs').answerFromTable('main', process.argv.slice(2))) {
  import('./conndrain.mjs');
}
