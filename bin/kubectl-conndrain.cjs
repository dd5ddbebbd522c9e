#!/usr/bin/env node
'use strict';
// The kubectl plugin `kubectl conndrain` (cli/kubectl-plugin.ts; package.json "bin"): as
// bin/conndrain.cjs, with the plugin's entry point (dist/cli/kubectl-main.js).
import('./conndrain.mjs?entry=kubectl-main');
