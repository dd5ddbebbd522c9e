import type { ConntrackApi } from 'netlink-native/types';

export type ConntrackHandle = ConntrackApi & { close(): void };

/**
 * Opens netlink-native in a network namespace, loading it lazily (the webhook image has no
 * addon). Errors say what is missing instead of a stack trace.
 */
export async function openConntrack(netns: string | undefined): Promise<ConntrackHandle> {
  let native: typeof import('netlink-native');
  try {
    native = await import('netlink-native');
  } catch (error) {
    throw new Error(`netlink-native is not available (${error instanceof Error ? error.message : String(error)}); build it with \`npm run build:native\``);
  }
  return native.openNetlink(netns === undefined ? {} : { netns });
}
