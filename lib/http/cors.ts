/**
 * CORS for browser clients, per stage: `CORS_ALLOWED_ORIGINS` lists the allowed origins (comma-
 * separated); empty or unset, the default, allows none and adds no header. A response to an allowed
 * `Origin` names it in `Access-Control-Allow-Origin` and exposes the API's headers to scripts.
 * Preflight (`OPTIONS`) is answered in front of the functions: by API Gateway (infra/cors.ts) and
 * by the local API (local/server.ts), both from the values below.
 */
import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';

export const CORS_ORIGINS_VARIABLE = 'CORS_ALLOWED_ORIGINS';
export const CORS_ALLOW_HEADERS = ['Authorization', 'Content-Type', 'Idempotency-Key'] as const;
const CORS_EXPOSE_HEADERS = [
  'Location',
  'Link',
  'Deprecation',
  'Sunset',
  'Retry-After',
  'WWW-Authenticate',
  'Allow',
  'Idempotent-Replayed',
  'X-Request-Id',
] as const;
export const CORS_MAX_AGE_SECONDS = 600;

export const parseOrigins = (value: string | undefined): string[] =>
  (value ?? '')
    .split(',')
    .map((origin) => origin.trim())
    .filter(Boolean);

/** The headers for an answer to `origin`, or none when it is not allowed. */
function corsHeaders(origin: string | undefined, allowed: readonly string[]): Record<string, string> {
  if (!origin || !allowed.includes(origin)) return allowed.length ? { Vary: 'Origin' } : {};
  return {
    'Access-Control-Allow-Origin': origin,
    'Access-Control-Expose-Headers': CORS_EXPOSE_HEADERS.join(', '),
    Vary: 'Origin',
  };
}

/** Adds the CORS headers to every answer, errors included (use it first, so it runs last). */
export function cors(
  allowed = parseOrigins(process.env[CORS_ORIGINS_VARIABLE]),
): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> {
  const add = (request: { event: APIGatewayProxyEvent; response?: APIGatewayProxyResult | null | undefined }) => {
    if (!request.response || allowed.length === 0) return;
    const origin = request.event.headers?.origin ?? request.event.headers?.Origin;
    request.response.headers = { ...request.response.headers, ...corsHeaders(origin, allowed) };
  };
  return { after: add, onError: add };
}

/** The answer to a preflight for a resource allowing `allow`; undefined when CORS is off. */
export function preflightHeaders(
  origin: string | undefined,
  allow: readonly string[],
  allowed: readonly string[],
): Record<string, string> | undefined {
  if (allowed.length === 0) return undefined;
  if (!origin || !allowed.includes(origin)) return { Vary: 'Origin' };
  return {
    'Access-Control-Allow-Origin': origin,
    'Access-Control-Allow-Methods': allow.join(', '),
    'Access-Control-Allow-Headers': CORS_ALLOW_HEADERS.join(', '),
    'Access-Control-Max-Age': String(CORS_MAX_AGE_SECONDS),
    Vary: 'Origin',
  };
}
