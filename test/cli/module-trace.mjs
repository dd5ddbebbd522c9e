// `node --import ./test/cli/module-trace.mjs ...`: appends the URL of every module the process
// loads (after the hooks registered before it, tsx's included, resolved it) to the file named
// by CONNDRAIN_MODULE_TRACE, one per line. cli/start-up.test.ts reads it.
import { register } from 'node:module';

const file = process.env.CONNDRAIN_MODULE_TRACE;
if (file === undefined || file === '') throw new Error('module-trace.mjs: set CONNDRAIN_MODULE_TRACE to the file to write');
register('./module-trace-hooks.mjs', import.meta.url, { data: { file } });
