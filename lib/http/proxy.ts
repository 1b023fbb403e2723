/** The API Gateway proxy shapes every part of the pipeline speaks. */
import type { MiddlewareObj, Request } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';

export type ProxyRequest = Request<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context>;
export type ProxyMiddleware = MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context>;

/**
 * The request's store deadline (epoch ms) rides on the context the pipeline hands its middlewares:
 * a fresh object per invocation whose prototype is Lambda's context, so that no two requests,
 * concurrent in one process (the local API, the tests), ever share one, whatever objects their callers reuse.
 */
const STORE_DEADLINE = Symbol('storeDeadline');

export const withStoreDeadline = (context: Context, deadline: number): Context =>
  Object.create(context, { [STORE_DEADLINE]: { value: deadline } }) as Context;

/** The store deadline `withStoreDeadline` gave the request's context; none outside the pipeline. */
export const storeDeadlineOf = (context: Context | undefined): number | undefined =>
  (context as { [STORE_DEADLINE]?: number } | undefined)?.[STORE_DEADLINE];
