/**
 * The one middy pipeline every handler runs in:
 *   request log -> CORS -> JSON responses and errors -> header names -> bearer auth -> [deprecation] -> body or no body
 *   -> operation, all within the request's store budget (the key store's read counts too); the
 *   operation is handed the service's tables scoped to the request's store deadline.
 * A handler supplies only its operation; everything a client can get wrong is answered here
 * with an Error body, and nothing unexpected leaks past `INTERNAL`.
 */
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type { ApiKeyStore } from '../domain/apiKeys.ts';
import { ApiError, codeForStatus } from '../domain/errors.ts';
import { logError } from '../domain/log.ts';
import { routes, type OperationName } from '../domain/routes.ts';
import { storeBudget } from '../store/deadline.ts';
import { withinDeadline, type StoreTable } from '../store/dynamo.ts';
import { bearerAuth } from './auth.ts';
import { noBody } from './bodyLimits.ts';
import { cors } from './cors.ts';
import { assertBeforeSunset, deprecationHeaders } from './deprecation.ts';
import { lowerCaseHeaders } from './headers.ts';
import { storeDeadlineOf, withStoreDeadline, type ProxyMiddleware, type ProxyRequest } from './proxy.ts';
import { requestIdOf, requestLog } from './requestLog.ts';
import { JSON_CONTENT_TYPE, errorResponse } from './responses.ts';

/** What the pipeline reads of the service (lib/service.ts builds it from the environment). */
export interface PipelineService {
  keys: ApiKeyStore;
  /** The tables an operation calls, handed to it scoped to its request's deadline. */
  pets: StoreTable;
  control: StoreTable;
  now: () => Date;
  /** Each request's budget for store calls (lib/store/deadline.ts); default STORE_BUDGET_MS. */
  storeBudgetMs?: number | undefined;
}

export interface PipelineOptions {
  /**
   * What reads the body (createPet passes lib/http/jsonBody.ts's `jsonBody()`). Given by the function's
   * entry rather than imported here, so the GET functions bundle no body parser; without it, a body
   * is refused (`noBody`).
   */
  body?: readonly ProxyMiddleware[];
}

/** What an operation does with its request, given the service as that request sees it (`scopedService`). */
export type Operation<S> = (event: APIGatewayProxyEvent, service: S) => Promise<APIGatewayProxyResult>;

export function httpHandler<S extends PipelineService>(
  operation: OperationName,
  service: S,
  handle: Operation<S>,
  options: PipelineOptions = {},
) {
  const deprecation = routes.find((route) => route.operation === operation)?.deprecated;
  const pipeline = middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context>()
    .use(requestLog(operation))
    .use(cors())
    .use(jsonResponses(operation, deprecation ? (event) => deprecationHeaders(deprecation, event) : () => ({})))
    .use(lowerCaseHeaders())
    .use(bearerAuth(service.keys));
  if (deprecation) pipeline.use({ before: () => assertBeforeSunset(deprecation, service.now()) });
  for (const middleware of options.body ?? [noBody()]) pipeline.use(middleware);
  // Every context here is the one the wrapper below made: it always carries the deadline.
  const handler = pipeline.handler((event, context) =>
    handle(event, scopedService(service, storeDeadlineOf(context)!)),
  );
  // The deadline starts before authentication: reading the keys spends the same budget as the operation.
  return (event: APIGatewayProxyEvent, context: Context): Promise<APIGatewayProxyResult> => {
    const deadline = storeDeadline(context.getRemainingTimeInMillis?.(), service.storeBudgetMs);
    return handler(event, withStoreDeadline(context, deadline));
  };
}

/** The deadline (epoch ms) of a request starting now, with `remainingMs` left of its function's time. */
const storeDeadline = (remainingMs: number | undefined, budgetMs: number | undefined): number =>
  Date.now() + storeBudget(remainingMs, budgetMs);

/** `service` as one request sees it: its tables' calls aborted at the request's `deadline`. */
const scopedService = <S extends PipelineService>(service: S, deadline: number): S => ({
  ...service,
  pets: withinDeadline(service.pets, deadline),
  control: withinDeadline(service.control, deadline),
});

/** Every answer is JSON and carries the operation's own headers; every error becomes the spec's Error body. */
function jsonResponses(
  operation: OperationName,
  headersFor: (event: APIGatewayProxyEvent) => Record<string, string>,
): ProxyMiddleware {
  const finish = (request: ProxyRequest, response: APIGatewayProxyResult) => {
    response.headers = { ...response.headers, ...headersFor(request.event), 'Content-Type': JSON_CONTENT_TYPE };
    return response;
  };
  return {
    after: (request) => {
      if (request.response) finish(request, request.response);
    },
    onError: (request) => {
      request.response = finish(request, errorResponse(toApiError(request, operation), requestIdOf(request)));
    },
  };
}

function toApiError(request: ProxyRequest, operation: OperationName): ApiError {
  const { error } = request;
  if (error instanceof ApiError) {
    if (error.status >= 500) logFailure(request, operation, error.cause ?? error);
    return error;
  }
  // Errors that libraries raise http-errors style (middy's middlewares, for one) carry a client-safe status.
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const code = codeForStatus(status);
    return new ApiError(code, code === 'VALIDATION_FAILED' ? 'Invalid request.' : String(error?.message));
  }
  logFailure(request, operation, error);
  return new ApiError('INTERNAL', 'An unexpected error occurred; it has been logged.');
}

function logFailure(request: ProxyRequest, operation: OperationName, error: unknown): void {
  logError({ operation, requestId: requestIdOf(request), awsRequestId: request.context?.awsRequestId }, error);
}
