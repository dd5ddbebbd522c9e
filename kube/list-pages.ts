/**
 * A paginated list of one collection (`limit`/`continue`), one page at a time, so the caller
 * can project each item as it arrives and never hold the whole list. The first page's
 * resourceVersion is the list's (a watch starts from it). A continue token that expired
 * rejects with a KubeRequestError carrying 410.
 */
import type { KubeConnection } from './connection.js';
import { kubeRequest } from './request.js';

export interface ListPage {
  metadata?: { resourceVersion?: string; continue?: string };
  items?: unknown[];
}

export async function* listPages(connection: KubeConnection, path: string, options: { labelSelector?: string | undefined; fieldSelector?: string | undefined; pageSize: number }): AsyncGenerator<ListPage> {
  let token: string | undefined;
  do {
    const page = ((await kubeRequest(connection, 'GET', path, { labelSelector: options.labelSelector, fieldSelector: options.fieldSelector, limit: options.pageSize, continue: token })) ?? {}) as ListPage;
    yield page;
    token = page.metadata?.continue === '' ? undefined : page.metadata?.continue;
  } while (token !== undefined);
}
