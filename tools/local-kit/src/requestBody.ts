/** Reading a request body as API Gateway takes it, for the local API and the deployed runner alike. */
import type { IncomingMessage } from 'node:http';

/** API Gateway's own limit on a request body (10 MB); larger requests it answers 413 itself. */
export const MAX_REQUEST_BYTES = 10 * 1024 * 1024;

/** The whole body, or undefined past the limit (what remains is drained, not kept). */
export async function readRequestBody(
  request: IncomingMessage,
  limit: number = MAX_REQUEST_BYTES,
): Promise<Buffer | undefined> {
  if (Number(request.headers['content-length'] ?? 0) > limit) {
    request.resume();
    return undefined;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      request.resume();
      return undefined;
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
