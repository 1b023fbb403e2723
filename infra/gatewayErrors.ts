/**
 * The answers API Gateway gives by itself (gateway responses, and the 404/405 mock methods),
 * each in the spec's Error body with a code and status from lib/errors.ts.
 *
 * Gateway response templates are not VTL (simple `$context` substitution only), so each type gets a
 * fixed status and a fixed, JSON-safe message: nothing a client sent is echoed into the body.
 */
import { ResponseType } from 'aws-cdk-lib/aws-apigateway';
import { errorStatuses, RETRY_AFTER_SECONDS, type ErrorBody, type ErrorCode } from '../lib/domain/errors.ts';
import { API_BASE_PATH, type HttpMethod } from '../lib/domain/routes.ts';

export const JSON_MEDIA_TYPE = 'application/json';

export interface GatewayError {
  readonly type: ResponseType;
  readonly code: ErrorCode;
  readonly message: string;
  readonly headers?: Readonly<Record<string, string>>;
}

export const NOT_FOUND_MESSAGE = 'No resource exists at this path.';

export const GATEWAY_ERRORS: readonly GatewayError[] = [
  // A method/path with no API method. The `{proxy+}` mock answers unknown paths first; this
  // covers whatever still falls through (the API uses no IAM auth, so this type only ever
  // means "no such route" here, never a missing token).
  { type: ResponseType.MISSING_AUTHENTICATION_TOKEN, code: 'NOT_FOUND', message: NOT_FOUND_MESSAGE },
  { type: ResponseType.RESOURCE_NOT_FOUND, code: 'NOT_FOUND', message: NOT_FOUND_MESSAGE },
  { type: ResponseType.BAD_REQUEST_BODY, code: 'VALIDATION_FAILED', message: 'Invalid body.' },
  { type: ResponseType.BAD_REQUEST_PARAMETERS, code: 'VALIDATION_FAILED', message: 'Invalid request parameters.' },
  { type: ResponseType.REQUEST_TOO_LARGE, code: 'PAYLOAD_TOO_LARGE', message: 'The request is too large.' },
  {
    type: ResponseType.UNSUPPORTED_MEDIA_TYPE,
    code: 'UNSUPPORTED_MEDIA_TYPE',
    message: 'The request body has a content type that this API does not accept.',
  },
  {
    type: ResponseType.THROTTLED,
    code: 'TOO_MANY_REQUESTS',
    message: 'Too many requests; retry later.',
    headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
  },
  // Only with usage plans (none today); named so its 429 is never reported as DEFAULT_4XX's 403.
  {
    type: ResponseType.QUOTA_EXCEEDED,
    code: 'TOO_MANY_REQUESTS',
    message: 'The request quota is used up; retry later.',
  },
  {
    type: ResponseType.INTEGRATION_FAILURE,
    code: 'BAD_GATEWAY',
    message: 'The pet store failed to answer; retry later.',
  },
  {
    type: ResponseType.INTEGRATION_TIMEOUT,
    code: 'GATEWAY_TIMEOUT',
    message: 'The pet store did not answer in time; retry later.',
  },
  // A managed rule of the stage's web ACL blocked the request (constructs/firewall.ts); its rate
  // limit answers 429 with its own custom response instead.
  {
    type: ResponseType.WAF_FILTERED,
    code: 'FORBIDDEN',
    message: 'The request was refused by the web application firewall.',
  },
  // Whatever 4xx is left (access denied, signatures...) is a refusal by the gateway.
  { type: ResponseType.DEFAULT_4XX, code: 'FORBIDDEN', message: 'The request was refused by the API gateway.' },
  // Whatever 5xx is left (API configuration errors) is an internal error.
  { type: ResponseType.DEFAULT_5XX, code: 'INTERNAL', message: 'An unexpected error occurred in the API gateway.' },
];

export const errorBody = (code: ErrorCode, message: string): ErrorBody => ({
  code,
  message,
  status: errorStatuses[code],
});

/** What API Gateway puts in a 5xx body's `requestId`: its request id, as the access log has it. */
export const GATEWAY_REQUEST_ID = '$context.requestId';

/**
 * The body as a template: JSON, with `$context` references left for API Gateway to fill in. A 5xx
 * carries the request id, as the functions' 5xx bodies do.
 */
export const errorTemplate = (code: ErrorCode, message: string): string => {
  const body = errorBody(code, message);
  return JSON.stringify(body.status >= 500 ? { ...body, requestId: GATEWAY_REQUEST_ID } : body);
};

/** The 405 message for a resource: the method comes from API Gateway, the rest is fixed. */
export const methodNotAllowedMessage = (path: string, allow: readonly HttpMethod[]): string =>
  `The method $context.httpMethod is not allowed on ${API_BASE_PATH}${path}; allowed: ${allow.join(', ')}.`;

/** The `Allow` header value for a resource. */
export const allowHeader = (allow: readonly HttpMethod[]): string => allow.join(', ');

/**
 * Request content types the mock methods recognise. A request without Content-Type counts as
 * application/json; a type not listed here is answered 415 (the mocks never pass bodies through).
 */
export const MOCK_REQUEST_CONTENT_TYPES = [
  'application/json',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'application/xml',
  'text/xml',
  'application/octet-stream',
] as const;
