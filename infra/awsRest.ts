/**
 * One JSON call to an AWS REST control plane (API Gateway's, Lambda's), signed with SigV4 through
 * the SDK's own signer and credential chain: for the few calls the repository's tools make outside
 * the SDK clients it carries (no client package for one or two calls). `endpoint` replaces AWS's
 * (a stand-in in tests). An error answer is thrown as an Error named by its `x-amzn-ErrorType`.
 */
import { createHash, createHmac } from 'node:crypto';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { SignatureV4 } from '@smithy/signature-v4';

export interface AwsRestOptions {
  /** The signing name and host prefix: `apigateway`, `lambda`. */
  service: string;
  region: string;
  /** Another endpoint than AWS's (tests). */
  endpoint?: string | undefined;
  /** A named profile of the shared config files; the SDK's default chain otherwise. */
  profile?: string | undefined;
  fetch?: typeof fetch;
}

export type AwsRestCall = (
  method: string,
  path: string,
  body?: object,
  query?: Record<string, string>,
) => Promise<Record<string, unknown>>;

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
  typeof data === 'string'
    ? data
    : ArrayBuffer.isView(data)
      ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
      : new Uint8Array(data);

export function awsRestClient({
  service,
  region,
  endpoint,
  profile,
  fetch: send = fetch,
}: AwsRestOptions): AwsRestCall {
  const base = new URL(endpoint ?? `https://${service}.${region}.amazonaws.com`);
  const signer = new SignatureV4({
    service,
    region,
    credentials: defaultProvider(profile ? { profile } : {}),
    sha256: Sha256,
  });

  return async (method, path, body, query = {}) => {
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
    const response = await send(url, {
      method,
      headers: request.headers as Record<string, string>,
      ...(payload === undefined ? {} : { body: payload }),
    });
    const text = await response.text();
    const parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    if (!response.ok) {
      const type = String(response.headers.get('x-amzn-errortype') ?? `HTTP ${response.status}`).split(':')[0];
      throw Object.assign(new Error(String(parsed.message ?? parsed.Message ?? text)), { name: type });
    }
    return parsed;
  };
}
