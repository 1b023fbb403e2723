/**
 * The one middy pipeline every handler runs in:
 *   request log -> CORS -> JSON responses and errors -> header names -> bearer auth -> key scope -> [deprecation] -> body or no body
 *   -> operation, all within the request's store budget (the key store's read counts too). The request
 *   travels through them as one `RequestContext` (./proxy.ts); the operation is handed its `RequestScope`:
 *   its caller, and the tables scoped to its deadline.
 * A handler supplies only its operation; everything a client can get wrong is answered here
 * with an Error body, and nothing unexpected leaks past `INTERNAL`.
 */
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type { ApiKeyStore, Caller } from '../domain/apiKeys.ts';
import type { Deadline } from '../domain/deadline.ts';
import { ApiError, codeForStatus } from '../domain/errors.ts';
import { logError } from '../domain/log.ts';
import { routes, type OperationName } from '../domain/routes.ts';
import { requestDeadline } from '../store/deadline.ts';
import { withinDeadline, type StoreTable } from '../store/dynamo.ts';
import type { PetsTable } from '../store/table.ts';
import { bearerAuth, requireScope } from './auth.ts';
import { noBody } from './bodyLimits.ts';
import { cors } from './cors.ts';
import { assertBeforeSunset, deprecationHeaders } from './deprecation.ts';
import { lowerCaseHeaders } from './headers.ts';
import {
  requestContext,
  type OperationNotes,
  type ProxyMiddleware,
  type ProxyRequest,
  type RequestContext,
} from './proxy.ts';
import { requestIdOf, requestLog } from './requestLog.ts';
import { JSON_CONTENT_TYPE, errorResponse } from './responses.ts';

/** What the pipeline reads of the service's dependencies (lib/service.ts builds them from the environment). */
export interface PipelineDependencies {
  keys: ApiKeyStore;
  /** The tables an operation calls, handed to it scoped to its request's deadline. */
  pets: PetsTable;
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

/** What an operation works with of its request, which the pipeline has authenticated. */
export interface RequestScope {
  /** Who sent it: two keys never see each other's idempotency records (every key reads every pet). */
  caller: Caller;
  /** When its store calls stop: what the caches' callers pass (the tables below carry it already). */
  deadline: Deadline;
  /** The tables, every call through them aborted at `deadline`. */
  pets: PetsTable;
  control: StoreTable;
  /** Adds to the request's log line (./requestLog.ts). */
  note: (notes: OperationNotes) => void;
}

/** What an operation does with its request. */
export type Operation = (event: APIGatewayProxyEvent, scope: RequestScope) => Promise<APIGatewayProxyResult>;

export function httpHandler(
  operation: OperationName,
  dependencies: PipelineDependencies,
  handle: Operation,
  options: PipelineOptions = {},
) {
  const route = routes.find((candidate) => candidate.operation === operation);
  if (route === undefined) throw new Error(`No route has the operation ${operation}.`);
  const deprecation = route.deprecated;
  const pipeline = middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, RequestContext>()
    .use(requestLog(operation))
    .use(cors())
    .use(jsonResponses(operation, deprecation ? (event) => deprecationHeaders(deprecation, event) : () => ({})))
    .use(lowerCaseHeaders())
    .use(bearerAuth(dependencies.keys))
    .use(requireScope(route.method));
  if (deprecation) pipeline.use({ before: () => assertBeforeSunset(deprecation, dependencies.now()) });
  for (const middleware of options.body ?? [noBody()]) pipeline.use(middleware);
  const handler = pipeline.handler((event, context) => handle(event, requestScope(context, dependencies)));
  // The deadline starts before authentication: reading the keys spends the same budget as the operation.
  return (event: APIGatewayProxyEvent, context: Context): Promise<APIGatewayProxyResult> => {
    const startedAt = process.hrtime.bigint();
    const deadline = requestDeadline(Date.now(), context.getRemainingTimeInMillis?.(), dependencies.storeBudgetMs);
    return handler(event, requestContext(context, deadline, startedAt));
  };
}

/** What the operation of an authenticated request works with: its caller, and the tables bounded by its deadline. */
function requestScope(
  { caller, deadline, notes }: RequestContext,
  { pets, control }: PipelineDependencies,
): RequestScope {
  // bearerAuth runs before every operation, and either names the caller or throws.
  if (caller === undefined) throw new Error('An operation runs only for a request bearer auth has authenticated.');
  return {
    caller,
    deadline,
    pets: withinDeadline(pets, deadline),
    control: withinDeadline(control, deadline),
    note: (added) => Object.assign(notes, added),
  };
}

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
