/**
 * node:http's values, loaded with require(). On Node 22 and later an ESM import of node:http
 * builds the module's namespace by reading every export, and its lazy exports (WebSocket,
 * CloseEvent, MessageEvent: undici's) then load undici and, through it, http2 and
 * worker_threads at start: memory on every node for nothing the agent uses (docs/scale.md).
 * require() leaves them lazy. Types still come from `import type ... from 'node:http'`; lint
 * refuses a value import of node:http in shipped code.
 */
import { createRequire } from 'node:module';
import type * as Http from 'node:http';

const http = createRequire(import.meta.url)('node:http') as typeof Http;

export const { createServer, request, Agent } = http;
