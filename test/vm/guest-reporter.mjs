// A node:test reporter for tests run inside the VM: one JSON line per finished test
// ({path, ok, skip, todo, ms, error}), read back by test/vm/guest-tests.ts on the host.
// Plain .mjs because `--test-reporter` loads it before tsx could compile anything.
function describeError(error) {
  if (error === undefined || error === null) return undefined;
  const inner = error.cause ?? error;
  const message = inner instanceof Error ? `${inner.name}: ${inner.message}` : String(inner);
  const stack = inner instanceof Error && typeof inner.stack === 'string' ? inner.stack : '';
  return { message, stack, failureType: error.failureType };
}

export default async function* guestReporter(source) {
  const stack = [];
  for await (const event of source) {
    if (event.type === 'test:start') {
      stack[event.data.nesting] = event.data.name;
      stack.length = event.data.nesting + 1;
    } else if (event.type === 'test:diagnostic' && event.data.nesting > 0) {
      // t.diagnostic() inside a test (nesting 0 carries the runner's summary lines)
      yield `${JSON.stringify({ diagnostic: event.data.message, nesting: event.data.nesting, path: stack.slice(0, event.data.nesting + 1) })}\n`;
    } else if (event.type === 'test:pass' || event.type === 'test:fail') {
      const { data } = event;
      const path = [...stack.slice(0, data.nesting), data.name];
      yield `${JSON.stringify({
        path,
        nesting: data.nesting,
        ok: event.type === 'test:pass',
        skip: data.skip !== undefined && data.skip !== false,
        todo: data.todo !== undefined && data.todo !== false,
        suite: data.details?.type === 'suite',
        ms: data.details?.duration_ms ?? 0,
        file: data.file,
        error: event.type === 'test:fail' ? describeError(data.details?.error) : undefined,
      })}\n`;
    }
  }
}
