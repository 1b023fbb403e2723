/** The API Gateway proxy shapes every part of the pipeline speaks, and the context one request carries through it. */
import type { MiddlewareObj, Request } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type { Caller } from '../domain/apiKeys.ts';
import type { Deadline } from '../domain/deadline.ts';

/**
 * One request as the pipeline's middlewares see it, and as middy's own packages pass per-request
 * state to a handler: on the context, typed. Only the pipeline (./pipeline.ts) makes one, with
 * `requestContext`; the operation is handed what it needs of it as a `RequestScope`.
 */
export interface RequestContext extends Context {
  /** When this request's store calls stop; fixed as it starts, so reading the keys spends the same budget as the operation. */
  readonly deadline: Deadline;
  /** When it started (process.hrtime), for the request log's latency. */
  readonly startedAt: bigint;
  /** Who sent it, once bearer auth (./auth.ts) has checked the key; a request without one never reaches its operation. */
  caller: Caller | undefined;
  /** What the operation adds to the request's log line (./requestLog.ts). */
  readonly notes: OperationNotes;
}

/** What an operation may add to its request's log line: createPet names the pet it answered, and a replay. */
export interface OperationNotes {
  /** The id of the pet a create answered (created, or replayed). */
  petId?: number;
  /** The answer replayed an earlier create with the same Idempotency-Key. */
  replayed?: true;
}

export type ProxyRequest = Request<APIGatewayProxyEvent, APIGatewayProxyResult, Error, RequestContext>;
export type ProxyMiddleware = MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, RequestContext>;

/**
 * A fresh context for one invocation whose prototype is Lambda's `context`: no two requests, concurrent
 * in one process (the local API, the tests), ever share one, whatever objects their callers reuse, and
 * what Lambda's context holds (its clock, its `callbackWaitsForEmptyEventLoop` setter) stays its own.
 */
export function requestContext(context: Context, deadline: Deadline, startedAt: bigint): RequestContext {
  const own: Pick<RequestContext, 'deadline' | 'startedAt' | 'caller' | 'notes'> = {
    deadline,
    startedAt,
    caller: undefined,
    notes: {},
  };
  return Object.assign(Object.create(context), own);
}
