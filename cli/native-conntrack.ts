import type { ConntrackApi } from '../native/lib/types.js';

export type ConntrackHandle = ConntrackApi & { close(): void };

interface NativeModule {
  open?: (options?: { netns?: string }) => ConntrackHandle | Promise<ConntrackHandle>;
}

/**
 * Opens netlink-native (loaded lazily: the webhook image has no addon) in a network namespace.
 * Errors say what is missing instead of a stack trace.
 */
export async function openConntrack(netns: string | undefined): Promise<ConntrackHandle> {
  const specifier = '../native/lib/index.js';
  let native: NativeModule;
  try {
    native = (await import(specifier)) as NativeModule;
  } catch (error) {
    throw new Error(`netlink-native is not available (${error instanceof Error ? error.message : String(error)}); build it with \`npm run build:native\``);
  }
  if (typeof native.open !== 'function') throw new Error('netlink-native has no open()');
  return await native.open(netns === undefined ? {} : { netns });
}
