/**
 * What `check` reads from the API server, each read as a `Fetched` (the value, or the API
 * server's answer): a check that cannot read its objects fails on its own line, the others
 * still run. Only a connection that fails outright (no API server at all) ends the command.
 */
import type { KubeConnection } from '../../kube/connection.js';
import { kubeRequest, KubeRequestError, type KubeQuery } from '../../kube/request.js';
import type { Fetched } from '../../src/check/checks.js';
import type { KubeJson } from '../../src/check/types.js';

/** The API server could not be reached at all (not an HTTP answer). */
export class ApiUnreachable extends Error {}

function asFetched<T>(error: unknown): Fetched<T> {
  if (error instanceof KubeRequestError) return { ok: false, error: error.message };
  throw new ApiUnreachable(error instanceof Error ? error.message : String(error));
}

/** GET one object; a 404 is `undefined`, not an error. */
export async function readObject(kube: KubeConnection, path: string): Promise<Fetched<KubeJson | undefined>> {
  try {
    return { ok: true, value: (await kubeRequest(kube, 'GET', path)) as KubeJson };
  } catch (error) {
    if (error instanceof KubeRequestError && error.statusCode === 404) return { ok: true, value: undefined };
    return asFetched(error);
  }
}

/** A list, page by page (`limit`/`continue`), so a large cluster is read in bounded answers. */
export async function readList(kube: KubeConnection, path: string, query: KubeQuery = {}, pageSize = 500): Promise<Fetched<KubeJson[]>> {
  const items: KubeJson[] = [];
  let next: string | undefined;
  try {
    do {
      const page = (await kubeRequest(kube, 'GET', path, { ...query, limit: pageSize, continue: next })) as { items?: KubeJson[]; metadata?: { continue?: string } };
      items.push(...(page.items ?? []));
      next = page.metadata?.continue === '' ? undefined : page.metadata?.continue;
    } while (next !== undefined);
    return { ok: true, value: items };
  } catch (error) {
    return asFetched(error);
  }
}
