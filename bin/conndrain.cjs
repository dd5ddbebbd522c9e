#!/usr/bin/env node
'use strict';
// The `conndrain` command (package.json "bin"): the ES module launcher bin/conndrain.mjs, which
// runs the compiled CLI (dist/cli/main.js), or the TypeScript through tsx in a checkout that
// is not built. CommonJS so that the file name the package, krew and kubectl know stays.
import('./conndrain.mjs');
