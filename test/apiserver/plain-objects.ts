/**
 * The stand-in's plain (not watched) objects: Secrets and MutatingWebhookConfigurations, with
 * the API server's answers for what the webhook's self-signed mode does:
 *   GET    /api/v1/namespaces/<ns>/secrets/<name>                          200 | 404
 *   POST   /api/v1/namespaces/<ns>/secrets                                 201 | 409 AlreadyExists
 *   PUT    /api/v1/namespaces/<ns>/secrets/<name>                          200 | 404 | 409 Conflict (stale resourceVersion)
 *   GET    /apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/<name>
 *   PATCH  the same, Content-Type application/json-patch+json             200 | 404 | 415 | 422 (a failed `test`)
 */
import type { IncomingMessage } from 'node:http';
import fastJsonPatch from 'fast-json-patch';
import type { JsonObject } from './server.js';

type Send = (code: number, body: unknown) => void;

const SECRET = /^\/api\/v1\/namespaces\/([^/]+)\/secrets(?:\/([^/]+))?$/;
const MWC = /^\/apis\/admissionregistration\.k8s\.io\/v1\/mutatingwebhookconfigurations\/([^/]+)$/;

function status(code: number, reason: string, message: string): JsonObject {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

export class PlainObjects {
  private readonly secrets = new Map<string, JsonObject>();
  private readonly webhookConfigurations = new Map<string, JsonObject>();
  private rv = 1000;
  /** Creates attempted, including refused ones (for "first replica wins" assertions). */
  secretCreates = 0;

  getSecret(namespace: string, name: string): JsonObject | undefined {
    return structuredClone(this.secrets.get(`${namespace}/${name}`));
  }

  putSecret(secret: JsonObject): void {
    const meta = secret.metadata ?? {};
    this.secrets.set(`${meta.namespace ?? 'default'}/${meta.name ?? ''}`, this.stamp({ kind: 'Secret', apiVersion: 'v1', ...structuredClone(secret) }));
  }

  getMutatingWebhookConfiguration(name: string): JsonObject | undefined {
    return structuredClone(this.webhookConfigurations.get(name));
  }

  putMutatingWebhookConfiguration(object: JsonObject): void {
    this.webhookConfigurations.set(object.metadata?.name ?? '', this.stamp(structuredClone(object)));
  }

  private stamp(object: JsonObject): JsonObject {
    this.rv += 1;
    return { ...object, metadata: { ...object.metadata, resourceVersion: String(this.rv), uid: object.metadata?.uid ?? `stand-in-plain-${this.rv}` } };
  }

  /** Answers the request when it is one of the routes above; false otherwise. */
  handle(req: IncomingMessage, pathname: string, send: Send, readJson: (then: (body: JsonObject | undefined) => void) => void): boolean {
    const secret = SECRET.exec(pathname);
    if (secret !== null) {
      this.handleSecret(req.method ?? 'GET', secret[1] ?? '', secret[2], send, readJson);
      return true;
    }
    const mwc = MWC.exec(pathname);
    if (mwc !== null) {
      this.handleWebhookConfiguration(req, mwc[1] ?? '', send, readJson);
      return true;
    }
    return false;
  }

  private handleSecret(method: string, namespace: string, name: string | undefined, send: Send, readJson: (then: (body: JsonObject | undefined) => void) => void): void {
    if (method === 'GET' && name !== undefined) {
      const found = this.secrets.get(`${namespace}/${name}`);
      if (found === undefined) send(404, status(404, 'NotFound', `secrets "${name}" not found`));
      else send(200, found);
      return;
    }
    if (method === 'POST' && name === undefined) {
      readJson((body) => {
        this.secretCreates += 1;
        const key = `${namespace}/${body?.metadata?.name ?? ''}`;
        if (body === undefined) send(400, status(400, 'BadRequest', 'stand-in: body is not JSON'));
        else if (this.secrets.has(key)) send(409, status(409, 'AlreadyExists', `secrets "${body.metadata?.name ?? ''}" already exists`));
        else {
          const stored = this.stamp({ ...body, metadata: { ...body.metadata, namespace } });
          this.secrets.set(key, stored);
          send(201, stored);
        }
      });
      return;
    }
    if (method === 'PUT' && name !== undefined) {
      readJson((body) => {
        const key = `${namespace}/${name}`;
        const existing = this.secrets.get(key);
        if (body === undefined) send(400, status(400, 'BadRequest', 'stand-in: body is not JSON'));
        else if (existing === undefined) send(404, status(404, 'NotFound', `secrets "${name}" not found`));
        else if (body.metadata?.resourceVersion !== existing.metadata?.resourceVersion) {
          send(409, status(409, 'Conflict', `Operation cannot be fulfilled on secrets "${name}": the object has been modified; please apply your changes to the latest version and try again`));
        } else {
          const stored = this.stamp({ ...body, metadata: { ...body.metadata, namespace, uid: existing.metadata?.uid } });
          this.secrets.set(key, stored);
          send(200, stored);
        }
      });
      return;
    }
    send(405, status(405, 'MethodNotAllowed', `stand-in: ${method} not served on secrets`));
  }

  private handleWebhookConfiguration(req: IncomingMessage, name: string, send: Send, readJson: (then: (body: JsonObject | undefined) => void) => void): void {
    const existing = this.webhookConfigurations.get(name);
    if (existing === undefined) {
      send(404, status(404, 'NotFound', `mutatingwebhookconfigurations.admissionregistration.k8s.io "${name}" not found`));
      return;
    }
    if (req.method === 'GET') {
      send(200, existing);
      return;
    }
    if (req.method !== 'PATCH') {
      send(405, status(405, 'MethodNotAllowed', `stand-in: ${req.method ?? ''} not served on mutatingwebhookconfigurations`));
      return;
    }
    if (!(req.headers['content-type'] ?? '').startsWith('application/json-patch+json')) {
      send(415, status(415, 'UnsupportedMediaType', `stand-in: only JSON patch, not ${req.headers['content-type'] ?? 'none'}`));
      return;
    }
    readJson((ops) => {
      if (!Array.isArray(ops)) {
        send(400, status(400, 'BadRequest', 'stand-in: a JSON patch is an array'));
        return;
      }
      try {
        const patched = fastJsonPatch.applyPatch(structuredClone(existing), ops as fastJsonPatch.Operation[], true, false).newDocument;
        const stored = this.stamp(patched);
        this.webhookConfigurations.set(name, stored);
        send(200, stored);
      } catch (error) {
        send(422, status(422, 'Invalid', `stand-in: the JSON patch does not apply: ${(error as Error).message}`));
      }
    });
  }
}
