/** JSON responses in API Gateway's proxy result shape. */
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { ApiError } from '../domain/errors.ts';
import { API_BASE_PATH } from '../domain/routes.ts';
import type { PetStatus } from '../domain/schemas.ts';

export const JSON_CONTENT_TYPE = 'application/json';

/**
 * On every answer, whoever gives it: the functions (here), API Gateway's own answers (gateway
 * responses, the 404/405 mocks, CORS preflight: infra/), the web ACL's refusals
 * (infra/constructs/firewall.ts) and the local API's answers (local/server.ts), /docs included. No
 * answer is for a cache to keep (a pet changes, a refusal is about one key), and no browser is to
 * guess a type other than the one declared.
 */
export const HARDENING_HEADERS = { 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' } as const;

export function jsonResponse(
  statusCode: number,
  body: unknown,
  headers: Record<string, string> = {},
): APIGatewayProxyResult {
  return {
    statusCode,
    headers: { 'Content-Type': JSON_CONTENT_TYPE, ...headers, ...HARDENING_HEADERS },
    body: JSON.stringify(body),
  };
}

/** The Error body; a 5xx also carries the request id, for the client to quote when it reports it. */
export const errorResponse = (error: ApiError, requestId?: string): APIGatewayProxyResult =>
  jsonResponse(error.status, error.status >= 500 && requestId ? { ...error.toBody(), requestId } : error.toBody(), {
    ...error.headers,
  });

/**
 * The absolute URL of a path below the base path, on the stage's own address: the domain API Gateway
 * puts in the request context (the local API puts its listen address there), never the client's
 * `Host`, which a client can set to anything. HTTPS, except on a loopback address (the local API).
 */
export function absoluteUrl(event: Pick<APIGatewayProxyEvent, 'requestContext'>, path: string): string {
  const domain = event.requestContext?.domainName;
  if (!domain) return `${API_BASE_PATH}${path}`;
  const scheme = LOOPBACK.test(domain) ? 'http' : 'https';
  return `${scheme}://${domain}${API_BASE_PATH}${path}`;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|\[::1\])(:\d+)?$/;

/** `<{origin}/v1/pets?limit=N&status=S&cursor=C>; rel="next"`, keeping the query's limit and status. */
export function nextPageLink(
  collectionUrl: string,
  query: { limit: number; status?: PetStatus | undefined },
  cursor: string,
): string {
  const params = new URLSearchParams({ limit: String(query.limit) });
  if (query.status) params.set('status', query.status);
  params.set('cursor', cursor);
  return `<${collectionUrl}?${params.toString()}>; rel="next"`;
}
