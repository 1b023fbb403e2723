/** JSON responses in API Gateway's proxy result shape. */
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { ApiError } from './errors.ts';
import { API_BASE_PATH } from './routes.ts';

export const JSON_CONTENT_TYPE = 'application/json';

export function jsonResponse(statusCode: number, body: unknown, headers: Record<string, string> = {}): APIGatewayProxyResult {
  return { statusCode, headers: { 'Content-Type': JSON_CONTENT_TYPE, ...headers }, body: JSON.stringify(body) };
}

/** The Error body; a 5xx also carries the request id, for the client to quote when it reports it. */
export const errorResponse = (error: ApiError, requestId?: string): APIGatewayProxyResult =>
  jsonResponse(error.status, error.status >= 500 && requestId ? { ...error.toBody(), requestId } : error.toBody(), {
    ...error.headers,
  });

/**
 * The absolute URL of a path below the base path, as the client reached the API
 * (API Gateway sets Host and X-Forwarded-Proto; so does the local API).
 */
export function absoluteUrl(event: Pick<APIGatewayProxyEvent, 'headers'>, path: string): string {
  const host = event.headers?.host;
  const proto = event.headers?.['x-forwarded-proto']?.split(',')[0]?.trim() || 'https';
  return host ? `${proto}://${host}${API_BASE_PATH}${path}` : `${API_BASE_PATH}${path}`;
}
