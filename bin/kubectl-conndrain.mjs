#!/usr/bin/env node
// The kubectl plugin `kubectl conndrain` (cli/kubectl-plugin.ts): bin/conndrain.mjs, told to
// run the plugin's entry point.
import './conndrain.mjs?entry=kubectl-main';
