/**
 * API Gateway proxy events for handler tests, built by the same code the local API uses,
 * so a handler test sees exactly what the deployed function would.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { API_STAGE, matchRoute, routes, type Route } from '../../lib/domain/routes.ts';
import { localContext, toProxyEvent } from '@petstore/local-kit/proxyEvent';
import { assertDocumented } from './contract.ts';
import { TEST_API_KEY } from './store.ts';

export interface EventOptions {
  headers?: Record<string, string>;
  /** A string is sent as it is; anything else as JSON. */
  body?: unknown;
  /** Send no Authorization header; by default the test key is sent. */
  anonymous?: boolean;
  /** Route to use when the path itself would not match one (e.g. a bad path parameter). */
  route?: Route;
}

export function apiEvent(method: string, target: string, options: EventOptions = {}): APIGatewayProxyEvent {
  const url = new URL(target, 'http://api.test');
  const match = matchRoute(method, url.pathname);
  const route = options.route ?? (match.kind === 'found' ? match.route : undefined);
  if (!route) throw new Error(`no route for ${method} ${url.pathname}`);
  const headers: Record<string, string> = {
    Host: 'api.test',
    'X-Forwarded-Proto': 'https',
    ...(options.anonymous ? {} : { Authorization: `Bearer ${TEST_API_KEY}` }),
    ...(options.body !== undefined ? { 'Content-Type': 'application/json' } : {}),
    ...options.headers,
  };
  const body =
    options.body === undefined ? '' : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  return toProxyEvent(
    {
      method,
      path: url.pathname,
      query: url.searchParams,
      rawHeaders: Object.entries(headers).flat(),
      body: Buffer.from(body),
      sourceIp: '127.0.0.1',
      domainName: 'api.test',
    },
    route,
    match.kind === 'found' ? match.pathParameters : {},
    API_STAGE,
  );
}

export const routeOf = (operation: Route['operation']): Route => {
  const route = routes.find((r) => r.operation === operation);
  if (!route) throw new Error(operation);
  return route;
};

type Handler = (
  event: APIGatewayProxyEvent,
  context: ReturnType<typeof localContext>,
) => Promise<APIGatewayProxyResult>;

/**
 * Invokes a handler and parses its JSON body, checking the answer against openapi.json. `remainingMs`:
 * the Lambda time the invocation has left (10 s unless given; the store budget is at most that less ANSWER_MARGIN_MS).
 */
export async function call(handler: Handler, event: APIGatewayProxyEvent, remainingMs?: number) {
  const result = await handler(event, localContext('test', remainingMs));
  const headers = Object.fromEntries(
    Object.entries(result.headers ?? {}).map(([k, v]) => [k.toLowerCase(), String(v)]),
  );
  if (headers['content-type'] !== 'application/json')
    throw new Error(`no JSON content type: ${JSON.stringify(result)}`);
  // The headers of every answer (lib/http/responses.ts HARDENING_HEADERS), on every handler answer.
  if (headers['cache-control'] !== 'no-store' || headers['x-content-type-options'] !== 'nosniff')
    throw new Error(`no Cache-Control: no-store and X-Content-Type-Options: nosniff: ${JSON.stringify(result)}`);
  const response = { status: result.statusCode, headers, body: JSON.parse(result.body) as any };
  assertDocumented(event.httpMethod, event.resource, response);
  return response;
}
