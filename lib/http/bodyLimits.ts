/**
 * What a request may carry as a body, by method, checked in front of the functions before any key
 * is: by the stage's web ACL (infra/constructs/firewall.ts) and by the local API (local/server.ts),
 * so a client is not read 10 MB to learn that its key is wrong. The functions check again themselves
 * (createPet in ./jsonBody.ts, the GET operations with `noBody`), which is what a stage with its web
 * ACL turned off relies on: every stage and the local API answer a body alike.
 */
import type { ErrorCode } from '../domain/errors.ts';
import { ApiError } from '../domain/errors.ts';
import type { ProxyMiddleware } from './proxy.ts';

/** The largest createPet body we accept; a pet is a few hundred bytes. */
export const MAX_BODY_BYTES = 16 * 1024;

/** The refusals, in the Error shape: one wording wherever a body is refused. */
export const BODY_REFUSALS = {
  PayloadTooLarge: { code: 'PAYLOAD_TOO_LARGE', message: `The request body must be at most ${MAX_BODY_BYTES} bytes.` },
  BodyOnGet: { code: 'VALIDATION_FAILED', message: 'A GET request must not have a body.' },
} as const satisfies Record<string, { code: ErrorCode; message: string }>;

/** The most body bytes a request with `method` may carry: none on a GET, MAX_BODY_BYTES otherwise. */
export const bodyLimitOf = (method: string): number => (method === 'GET' ? 0 : MAX_BODY_BYTES);

/** The refusal of a body of `bytes` sent with `method`, or undefined when it is within the limit. */
export function bodyRefusal(method: string, bytes: number): ApiError | undefined {
  if (bytes <= bodyLimitOf(method)) return undefined;
  const { code, message } = method === 'GET' ? BODY_REFUSALS.BodyOnGet : BODY_REFUSALS.PayloadTooLarge;
  return new ApiError(code, message);
}

/** For an operation that reads no body (the GETs): refuses one, as the local API and the web ACL do. */
export const noBody = (): ProxyMiddleware => ({
  before: ({ event }) => {
    const bytes = event.body ? Buffer.byteLength(event.body, event.isBase64Encoded ? 'base64' : 'utf8') : 0;
    const refusal = bodyRefusal(event.httpMethod, bytes);
    if (refusal) throw refusal;
  },
});
