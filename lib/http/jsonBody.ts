/**
 * The JSON body of createPet: media type, size and emptiness checked by us, then parsed by middy's
 * `http-json-body-parser`, whose refusals become our Error bodies (a `__proto__` or `constructor`
 * key is named as an unknown field, as the schema would name it). Only createPet's entry imports
 * this module, so the GET functions bundle no body parser.
 */
import httpJsonBodyParser from '@middy/http-json-body-parser';
import { ApiError } from '../domain/errors.ts';
import { BODY_REFUSALS, MAX_BODY_BYTES } from './bodyLimits.ts';
import type { ProxyMiddleware } from './proxy.ts';

export { MAX_BODY_BYTES };

const JSON_MEDIA_TYPE = /^application\/json\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;

/** The middlewares, in order, for `httpHandler`'s `body` option. */
export const jsonBody = (): ProxyMiddleware[] => [requireJsonBody(), parseJson()];

function parseJson(): ProxyMiddleware {
  const parser = httpJsonBodyParser();
  return {
    before: async (request) => {
      try {
        await parser.before?.(request);
      } catch (error) {
        throw bodyError(error);
      }
    },
  };
}

/** middy's parser refuses prototype keys (naming the key in `cause.data`) and malformed JSON, both 422. */
function bodyError(error: unknown): ApiError {
  const { message, cause } = error as { message?: string; cause?: { data?: unknown } };
  if (message === 'Forbidden key in JSON body' && typeof cause?.data === 'string') {
    return new ApiError('VALIDATION_FAILED', `Invalid body: unknown field '${cause.data}'.`);
  }
  return new ApiError('VALIDATION_FAILED', 'Invalid body: the body is not valid JSON.');
}

/**
 * A body in any content coding but identity (gzip, br...) is refused before it is read, whatever
 * its bytes: 415 with `Accept-Encoding: identity`, as RFC 7694 section 3 says a server does.
 */
function assertIdentityEncoding(contentEncoding: string | undefined): void {
  const codings = (contentEncoding ?? '').split(',').map((coding) => coding.trim().toLowerCase());
  if (codings.every((coding) => coding === '' || coding === 'identity')) return;
  throw new ApiError(
    'UNSUPPORTED_MEDIA_TYPE',
    'The request body must not be content-encoded: send it without Content-Encoding.',
    {
      'Accept-Encoding': 'identity',
    },
  );
}

/** Checks what middy's parser does not: the content coding, the exact media type, an empty body, the size limit. */
function requireJsonBody(): ProxyMiddleware {
  return {
    before: ({ event }) => {
      assertIdentityEncoding(event.headers?.['content-encoding']);
      const contentType = event.headers?.['content-type'] ?? '';
      if (!JSON_MEDIA_TYPE.test(contentType.trim())) {
        throw new ApiError(
          'UNSUPPORTED_MEDIA_TYPE',
          'The request body must be sent as Content-Type: application/json.',
        );
      }
      const body = event.body ?? '';
      const decoded = event.isBase64Encoded ? Buffer.from(body, 'base64') : undefined;
      const bytes = decoded ? decoded.length : Buffer.byteLength(body);
      if (bytes > MAX_BODY_BYTES) {
        const { code, message } = BODY_REFUSALS.PayloadTooLarge;
        throw new ApiError(code, message);
      }
      if (bytes === 0) throw new ApiError('VALIDATION_FAILED', 'Invalid body: a JSON object is required.');
      if (decoded) {
        event.body = strictUtf8(decoded);
        event.isBase64Encoded = false;
      }
    },
  };
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Bytes that are not UTF-8 (overlong forms, encoded surrogates, truncated sequences) are refused, never replaced by U+FFFD. */
function strictUtf8(bytes: Buffer): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new ApiError('VALIDATION_FAILED', 'Invalid body: the body is not valid UTF-8.');
  }
}
