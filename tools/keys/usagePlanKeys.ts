/**
 * The API Gateway side of an API key (docs/operating.md "Keyless traffic and per-key limits"): an API Gateway
 * API key named `petstore-<stage>-<keyId>` whose value is the key's SHA-256 hex digest (what the
 * authorizer returns as usageIdentifierKey), in the stage's usage plan. `npm run keys` creates it
 * with the control-table item and deletes it on revoke. The plaintext key never reaches API Gateway.
 *
 * Four calls of API Gateway's REST control plane, signed with SigV4 through the SDK's own signer and
 * credential chain (no API Gateway client package: the CLI needs only these).
 */
import { createHash, createHmac } from 'node:crypto';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { SignatureV4 } from '@smithy/signature-v4';

export interface UsagePlanKeys {
  /** Creates the API key (`value`: the digest) and adds it to the plan. */
  add(planId: string, key: { name: string; value: string; description?: string | undefined }): Promise<void>;
  /** Deletes every API key of that name (which also takes it out of its plan); how many there were. */
  remove(name: string): Promise<number>;
}

export interface ApiGatewayOptions {
  region: string;
  /** Another endpoint than AWS's (tests). */
  endpoint?: string | undefined;
  fetch?: typeof fetch;
}

/** SigV4 needs a SHA-256 with an optional HMAC secret; node:crypto's, in the shape the signer wants. */
class Sha256 {
  readonly #hash: ReturnType<typeof createHash> | ReturnType<typeof createHmac>;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.#hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.#hash.update(bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.#hash.digest());
  }
}

const bytes = (data: string | ArrayBuffer | ArrayBufferView): string | Uint8Array =>
  typeof data === 'string' ? data : ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : new Uint8Array(data);

export function apiGatewayUsagePlanKeys({ region, endpoint, fetch: send = fetch }: ApiGatewayOptions): UsagePlanKeys {
  const base = new URL(endpoint ?? `https://apigateway.${region}.amazonaws.com`);
  const signer = new SignatureV4({ service: 'apigateway', region, credentials: defaultProvider(), sha256: Sha256 });

  async function call(method: string, path: string, body?: object, query: Record<string, string> = {}): Promise<Record<string, unknown>> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const request = await signer.sign({
      method,
      protocol: base.protocol,
      hostname: base.hostname,
      port: base.port ? Number(base.port) : undefined,
      path,
      query,
      headers: { host: base.host, 'content-type': 'application/json', accept: 'application/json' },
      ...(payload === undefined ? {} : { body: payload }),
    });
    const url = new URL(path, base);
    for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
    const response = await send(url, { method, headers: request.headers as Record<string, string>, ...(payload === undefined ? {} : { body: payload }) });
    const text = await response.text();
    const parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    if (!response.ok) {
      const type = String(response.headers.get('x-amzn-errortype') ?? `HTTP ${response.status}`).split(':')[0];
      throw Object.assign(new Error(String(parsed.message ?? parsed.Message ?? text)), { name: type });
    }
    return parsed;
  }

  return {
    async add(planId, { name, value, description }) {
      const created = await call('POST', '/apikeys', { name, value, enabled: true, ...(description ? { description } : {}) });
      try {
        await call('POST', `/usageplans/${encodeURIComponent(planId)}/keys`, { keyId: created.id, keyType: 'API_KEY' });
      } catch (error) {
        // Not in the plan, the key would only ever answer 403: take it away again.
        await call('DELETE', `/apikeys/${encodeURIComponent(String(created.id))}`).catch(() => undefined);
        throw error;
      }
    },
    async remove(name) {
      // `name` filters by prefix; only the exact name is this key's.
      const listed = await call('GET', '/apikeys', undefined, { name, limit: '500' });
      const items = ((listed.item ?? listed.items ?? []) as { id: string; name: string }[]).filter((item) => item.name === name);
      for (const item of items) await call('DELETE', `/apikeys/${encodeURIComponent(item.id)}`);
      return items.length;
    },
  };
}
