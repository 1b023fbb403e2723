/**
 * The AWS clients' response body collector (`streamCollector` in `boundedClientConfig`): the bytes
 * of an HTTP response, read with `data` and `end` listeners.
 *
 * Why not the SDK's own: it pipes the response into a `Writable` of its own. On a cold start Node
 * compiles its stream piping and `Writable` code for that first response, which no other part of a
 * call needs: about 1.5 ms of the first invocation (docs/performance.md). The SDK calls the
 * collector only with the body its HTTP handler gave (the clients' handler is Node's, whose bodies
 * are Node streams), and only for a body not already in bytes.
 *
 * It settles as the SDK's does: the bytes once the body has ended, the stream's error if it fails.
 * A body closed before its end without an error is refused too, where the SDK's would wait for
 * the request's timeout.
 */
import type { Readable } from 'node:stream';

type Chunk = Uint8Array | string;

export function collectResponseBody(body: unknown): Promise<Uint8Array> {
  if (!isNodeStream(body)) return Promise.reject(new TypeError(`The response body is not a Node.js stream (${kindOf(body)}).`));
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    // Each listener returns nothing: Node inspects any other return value as a possible promise.
    body.on('data', (chunk: Chunk) => {
      chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    });
    body.on('error', reject);
    body.on('end', () => resolve(concatenated(chunks)));
    // Only before the end: settling a promise twice costs Node's rejection tracking its first run.
    body.on('close', () => {
      if (!body.readableEnded) reject(new Error('The response body closed before its end.'));
    });
  });
}

const isNodeStream = (body: unknown): body is Readable =>
  typeof body === 'object' && body !== null && typeof (body as Partial<Readable>).on === 'function' && typeof (body as Partial<Readable>).pipe === 'function';

const kindOf = (body: unknown) => (typeof body === 'object' && body !== null ? (body.constructor?.name ?? 'object') : typeof body);

/** One new array, as the SDK's collector returns: never a view into a buffer the caller does not own. */
function concatenated(chunks: Uint8Array[]): Uint8Array {
  const bytes = new Uint8Array(chunks.reduce((length, chunk) => length + chunk.byteLength, 0));
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
