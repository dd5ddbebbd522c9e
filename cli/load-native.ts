import { CliExit } from './exit.js';

export type NativeModule = typeof import('netlink-native');

/** Loads netlink-native lazily: the webhook image has no addon and never runs these commands. */
export async function loadNetlinkNative(): Promise<NativeModule> {
  try {
    return await import('netlink-native');
  } catch (error) {
    throw new CliExit(1, `netlink-native could not be loaded: ${error instanceof Error ? error.message : String(error)}`);
  }
}
