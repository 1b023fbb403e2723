/**
 * Deprecation of an operation, told on every answer it gives: `Deprecation` (RFC 9745),
 * `Sunset` (RFC 8594) and a `successor-version` link. From the sunset on it answers 410.
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { ApiError } from '../domain/errors.ts';
import { API_BASE_PATH, type Deprecation } from '../domain/routes.ts';
import { absoluteUrl } from './responses.ts';

/** The headers for an answer to `event`; the successor link is absolute, as every Link the service emits. */
export function deprecationHeaders(
  deprecation: Deprecation,
  event: Pick<APIGatewayProxyEvent, 'requestContext'>,
): Record<string, string> {
  return {
    Deprecation: `@${Math.floor(Date.parse(deprecation.since) / 1000)}`,
    Sunset: new Date(deprecation.sunset).toUTCString(),
    Link: `<${absoluteUrl(event, deprecation.successor)}>; rel="successor-version"`,
  };
}

export function assertBeforeSunset(deprecation: Deprecation, now: Date): void {
  if (now.getTime() >= Date.parse(deprecation.sunset)) {
    throw new ApiError(
      'GONE',
      `This operation was removed on ${new Date(deprecation.sunset).toUTCString()}; use GET ${API_BASE_PATH}${deprecation.successor} instead.`,
    );
  }
}
