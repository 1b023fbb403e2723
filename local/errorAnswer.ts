/**
 * The service's Error resource as an answer of a local server (the local API, and the stage emulator
 * at its HTTP edges, which is given it as its edge error shape): `errorResponse`'s JSON, with the
 * request id in the `X-Request-Id` header.
 */
import { randomUUID } from 'node:crypto';
import type { EdgeError, ErrorAnswer } from '@petstore/local-kit/httpEdges';
import { ApiError } from '../lib/domain/errors.ts';
import { REQUEST_ID_HEADER } from '../lib/http/requestLog.ts';
import { errorResponse } from '../lib/http/responses.ts';

/**
 * The Error answer of `error`. A 5xx body carries `requestId` when the request has one; a raw
 * answer to a socket the parser has given up on has none, so its header has an id of its own.
 */
export function apiErrorAnswer(error: ApiError | EdgeError, requestId?: string): ErrorAnswer {
  const apiError = error instanceof ApiError ? error : new ApiError(error.code, error.message);
  const { statusCode, headers, body } = errorResponse(apiError, requestId);
  return {
    status: statusCode,
    headers: { ...(headers as Record<string, string>), [REQUEST_ID_HEADER]: requestId ?? randomUUID() },
    body,
  };
}
