/**
 * The stand-in API server's control endpoints, for processes that do not hold the server
 * object (the lab drives it from the CLI): all under `/stand-in/`, JSON in and out.
 *   POST   /stand-in/pods                 body: a pod  -> ADDED/MODIFIED
 *   DELETE /stand-in/pods/<ns>/<name>                 -> DELETED
 *   POST   /stand-in/endpointslices       body: an EndpointSlice -> ADDED/MODIFIED
 *   DELETE /stand-in/endpointslices/<ns>/<name>       -> DELETED
 *   POST   /stand-in/namespaces       body: {"name": "shop", "labels": {..}} -> ADDED/MODIFIED
 *   DELETE /stand-in/namespaces/<name>                -> DELETED
 *   POST   /stand-in/services         body: a Service -> ADDED/MODIFIED (and its EndpointSlices)
 *   DELETE /stand-in/services/<ns>/<name>             -> DELETED (and its EndpointSlices)
 *   GET    /stand-in/services                         -> every Service
 *   GET    /stand-in/stats                            -> {bytesSent, openWatches, listStats, sliceController}
 *   POST   /stand-in/stats/reset                      -> zero bytesSent
 *   POST   /stand-in/expire                           -> 410 for every resourceVersion so far
 *   POST   /stand-in/drop                             -> reset every open watch
 *   POST   /stand-in/bookmark                         -> BOOKMARK to watches that asked
 *   POST   /stand-in/watch-list       body: {"support": "on"|"off"|"ignored"} -> how sendInitialEvents is served
 *   GET    /stand-in/events                           -> the Events clients created
 */
import type { IncomingMessage } from 'node:http';
import type { FakeApiServer } from './server.js';

export function handleControl(server: FakeApiServer, req: IncomingMessage, url: URL, send: (code: number, body: unknown) => void): void {
  const method = req.method ?? 'GET';
  const path = url.pathname;
  if (method === 'POST' && path === '/stand-in/pods') {
    server.readJson(req, (body) => {
      if (body === undefined) send(400, { error: 'body is not JSON' });
      else send(200, server.putPod(body));
    });
    return;
  }
  if (method === 'POST' && path === '/stand-in/endpointslices') {
    server.readJson(req, (body) => {
      if (body === undefined) send(400, { error: 'body is not JSON' });
      else send(200, server.putEndpointSlice(body));
    });
    return;
  }
  if (handleClusterObjects(server, req, method, path, send)) return;
  const delSlice = /^\/stand-in\/endpointslices\/([^/]+)\/([^/]+)$/.exec(path);
  if (method === 'DELETE' && delSlice !== null) {
    send(server.deleteEndpointSlice(delSlice[1]!, delSlice[2]!) ? 200 : 404, {});
    return;
  }
  const del = /^\/stand-in\/pods\/([^/]+)\/([^/]+)$/.exec(path);
  if (method === 'DELETE' && del !== null) {
    send(server.deletePod(del[1]!, del[2]!) ? 200 : 404, {});
    return;
  }
  if (method === 'POST' && path === '/stand-in/expire') {
    server.expireResourceVersions();
    send(200, {});
    return;
  }
  if (method === 'POST' && path === '/stand-in/drop') {
    server.dropWatches();
    send(200, {});
    return;
  }
  if (method === 'POST' && path === '/stand-in/bookmark') {
    server.sendBookmarks();
    send(200, {});
    return;
  }
  if (method === 'POST' && path === '/stand-in/watch-list') {
    server.readJson(req, (body) => {
      const support = body?.support;
      if (support !== 'on' && support !== 'off' && support !== 'ignored') send(400, { error: 'support must be "on", "off" or "ignored"' });
      else {
        server.watchList = support;
        send(200, {});
      }
    });
    return;
  }
  if (method === 'GET' && path === '/stand-in/stats') {
    send(200, { bytesSent: server.bytesSent(), openWatches: server.openWatchStats(), listStats: server.listStats, sliceController: server.sliceController.stats });
    return;
  }
  if (method === 'POST' && path === '/stand-in/stats/reset') {
    server.resetBytesSent();
    send(200, {});
    return;
  }
  if (method === 'GET' && path === '/stand-in/events') {
    send(200, server.events);
    return;
  }
  send(404, { error: `stand-in: no control route ${method} ${path}` });
}

/** Namespaces and Services: true when the request was one of their routes (answered). */
function handleClusterObjects(server: FakeApiServer, req: IncomingMessage, method: string, path: string, send: (code: number, body: unknown) => void): boolean {
  if (method === 'POST' && path === '/stand-in/namespaces') {
    server.readJson(req, (body) => {
      const name = body?.name;
      const labels = body?.labels ?? {};
      if (typeof name !== 'string' || name === '' || typeof labels !== 'object' || labels === null) send(400, { error: 'body must be {"name": string, "labels"?: {..}}' });
      else send(200, server.putNamespace(name, labels as Record<string, string>));
    });
    return true;
  }
  const delNamespace = /^\/stand-in\/namespaces\/([^/]+)$/.exec(path);
  if (method === 'DELETE' && delNamespace !== null) {
    send(server.deleteNamespace(delNamespace[1]!) ? 200 : 404, {});
    return true;
  }
  if (method === 'POST' && path === '/stand-in/services') {
    server.readJson(req, (body) => {
      if (body === undefined) send(400, { error: 'body is not JSON' });
      else send(200, server.putService(body));
    });
    return true;
  }
  if (method === 'GET' && path === '/stand-in/services') {
    send(200, server.listServices());
    return true;
  }
  const delService = /^\/stand-in\/services\/([^/]+)\/([^/]+)$/.exec(path);
  if (method === 'DELETE' && delService !== null) {
    send(server.deleteService(delService[1]!, delService[2]!) ? 200 : 404, {});
    return true;
  }
  return false;
}
