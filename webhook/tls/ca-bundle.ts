/**
 * The JSON patch that puts a CA bundle into the webhooks of a MutatingWebhookConfiguration
 * that call a given Service. Each change is preceded by a `test` of the webhook's name at
 * that index, so a list that changed since it was read makes the API server refuse the whole
 * patch (422) instead of writing into the wrong webhook.
 */
export interface CaBundleTarget {
  service: string;
  namespace: string;
  /** base64 of the CA's PEM, as clientConfig.caBundle holds it. */
  caBundle: string;
}

export type JsonPatchOp = { op: 'test' | 'add'; path: string; value: unknown };

interface WebhookLike {
  name?: string;
  clientConfig?: { caBundle?: string; service?: { name?: string; namespace?: string } };
}

export function caBundlePatch(configuration: { webhooks?: WebhookLike[] }, target: CaBundleTarget): JsonPatchOp[] {
  const ops: JsonPatchOp[] = [];
  (configuration.webhooks ?? []).forEach((webhook, index) => {
    const service = webhook.clientConfig?.service;
    if (service?.name !== target.service || service.namespace !== target.namespace) return;
    if (webhook.clientConfig?.caBundle === target.caBundle) return;
    ops.push({ op: 'test', path: `/webhooks/${index}/name`, value: webhook.name });
    ops.push({ op: 'add', path: `/webhooks/${index}/clientConfig/caBundle`, value: target.caBundle });
  });
  return ops;
}
