/**
 * The one middy pipeline every handler runs in:
 *   request log -> JSON responses and errors -> header normalizer -> bearer auth -> [deprecation] -> [JSON body]
 *   -> operation.
 * A handler supplies only its operation; everything a client can get wrong is answered here
 * with an Error body, and nothing unexpected leaks past `INTERNAL`.
 */
import middy, { type MiddlewareObj, type Request } from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { authenticate } from './auth.ts';
import { assertBeforeSunset, deprecationHeaders } from './deprecation.ts';
import { ApiError, codeForStatus } from './errors.ts';
import { logError } from './log.ts';
import { noteKeyId, requestIdOf, requestLog } from './requestLog.ts';
import { JSON_CONTENT_TYPE, errorResponse } from './responses.ts';
import { routes, type OperationName } from './routes.ts';
import type { Service } from './service.ts';

export type ProxyHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
type ProxyRequest = Request<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context>;
type ProxyMiddleware = MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context>;

/** The largest createPet body we accept; a pet is a few hundred bytes. */
export const MAX_BODY_BYTES = 16 * 1024;

export interface PipelineOptions {
  /** Parse the body as JSON (createPet). */
  jsonBody?: boolean;
}

export function httpHandler(
  operation: OperationName,
  service: Service,
  handle: ProxyHandler,
  options: PipelineOptions = {},
) {
  const deprecation = routes.find((route) => route.operation === operation)?.deprecated;
  const pipeline = middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context>()
    .use(requestLog(operation))
    .use(jsonResponses(operation, deprecation ? deprecationHeaders(deprecation) : {}))
    .use(httpHeaderNormalizer())
    .use({
      before: async (request: ProxyRequest) =>
        noteKeyId(request, await authenticate(request.event.headers?.authorization, service.keys)),
    });
  if (deprecation) pipeline.use({ before: () => assertBeforeSunset(deprecation, service.now()) });
  if (options.jsonBody) pipeline.use(requireJsonBody()).use(httpJsonBodyParser());
  return pipeline.handler(handle);
}

/** Every answer is JSON and carries `headers`; every error becomes the spec's Error body. */
function jsonResponses(operation: OperationName, headers: Record<string, string>): ProxyMiddleware {
  const finish = (response: APIGatewayProxyResult) => {
    response.headers = { ...response.headers, ...headers, 'Content-Type': JSON_CONTENT_TYPE };
    return response;
  };
  return {
    after: (request) => {
      if (request.response) finish(request.response);
    },
    onError: (request) => {
      request.response = finish(errorResponse(toApiError(request, operation), requestIdOf(request)));
    },
  };
}

function toApiError(request: ProxyRequest, operation: OperationName): ApiError {
  const { error } = request;
  if (error instanceof ApiError) {
    if (error.status >= 500) logFailure(request, operation, error.cause ?? error);
    return error;
  }
  // Errors that middy's own middlewares raise carry a client-safe status (415, 422, ...).
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const code = codeForStatus(status);
    return new ApiError(code, code === 'VALIDATION_FAILED' ? 'Invalid body: the body is not valid JSON.' : String(error?.message));
  }
  logFailure(request, operation, error);
  return new ApiError('INTERNAL', 'An unexpected error occurred; it has been logged.');
}

function logFailure(request: ProxyRequest, operation: OperationName, error: unknown): void {
  logError({ operation, requestId: requestIdOf(request), awsRequestId: request.context?.awsRequestId }, error);
}

const JSON_MEDIA_TYPE = /^application\/json\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;

/** Checks what middy's parser does not: the exact media type, an empty body, the size limit. */
function requireJsonBody(): ProxyMiddleware {
  return {
    before: ({ event }) => {
      const contentType = event.headers?.['content-type'] ?? '';
      if (!JSON_MEDIA_TYPE.test(contentType.trim())) {
        throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'The request body must be sent as Content-Type: application/json.');
      }
      const body = event.body ?? '';
      const bytes = event.isBase64Encoded ? Buffer.from(body, 'base64').length : Buffer.byteLength(body);
      if (bytes > MAX_BODY_BYTES) {
        throw new ApiError('PAYLOAD_TOO_LARGE', `The request body must be at most ${MAX_BODY_BYTES} bytes.`);
      }
      if (bytes === 0) throw new ApiError('VALIDATION_FAILED', 'Invalid body: a JSON object is required.');
    },
  };
}
