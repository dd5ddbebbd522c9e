import fastJsonPatch from 'fast-json-patch';

const { compare } = fastJsonPatch;

export type PatchOperation = ReturnType<typeof compare>[number];

/** The RFC 6902 operations that turn `original` into `mutated`. */
export function diffPatch(original: unknown, mutated: unknown): PatchOperation[] {
  return compare(original as object, mutated as object);
}

export function encodePatch(operations: readonly PatchOperation[]): string {
  return Buffer.from(JSON.stringify(operations)).toString('base64');
}
