/**
 * The answers API Gateway gives by itself (gateway responses, and the 404/405 mock methods),
 * each in the spec's Error body with a code and status from lib/domain/errors.ts.
 *
 * Gateway response templates are not VTL (simple `$context` substitution only), so each type gets a
 * fixed status and a fixed, JSON-safe message: nothing a client sent is echoed into the body.
 */
import { ResponseType } from 'aws-cdk-lib/aws-apigateway';
import { errorStatuses, RETRY_AFTER_SECONDS, type ErrorBody, type ErrorCode } from '../lib/domain/errors.ts';
import { SCOPE_REFUSED_MESSAGE } from '../lib/domain/keyScope.ts';
import { methodNotAllowedMessage as messageFor, NOT_FOUND_MESSAGE, type HttpMethod } from '../lib/domain/routes.ts';
import { BEARER_CHALLENGE, MISSING_OR_INVALID_KEY_MESSAGE } from '../lib/http/authorizer.ts';

export const JSON_MEDIA_TYPE = 'application/json';

export interface GatewayError {
  readonly type: ResponseType;
  readonly code: ErrorCode;
  readonly message: string;
  readonly headers?: Readonly<Record<string, string>>;
}

export { NOT_FOUND_MESSAGE };

const QUOTA_RETRY_AFTER_SECONDS = 3600;

/** The key authorizer's refusal, declared with it (lib/http/authorizer.ts): the local API answers it too. */
export { BEARER_CHALLENGE, MISSING_OR_INVALID_KEY_MESSAGE };

/**
 * The key authorizer's answers and the usage plan's (constructs/authorizer.ts). A gateway response
 * cannot tell a missing key from a wrong one, so both get one message and the bare challenge.
 */
const KEY_AUTHORIZER_ERRORS: readonly GatewayError[] = [
  {
    type: ResponseType.UNAUTHORIZED,
    code: 'UNAUTHORIZED',
    message: MISSING_OR_INVALID_KEY_MESSAGE,
    headers: { 'WWW-Authenticate': BEARER_CHALLENGE },
  },
  // A method outside the key's policy: the authorizer allows a read key only GET (lib/domain/keyScope.ts);
  // a bad key is a 401, never a Deny. The function answers the same 403 when it checks the scope itself.
  { type: ResponseType.ACCESS_DENIED, code: 'FORBIDDEN', message: SCOPE_REFUSED_MESSAGE },
  // The authorizer failed: it could not read the keys. Not cached; the next request asks again.
  {
    type: ResponseType.AUTHORIZER_FAILURE,
    code: 'SERVICE_UNAVAILABLE',
    message: 'The pet store is temporarily unavailable; retry later.',
    headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
  },
  {
    type: ResponseType.AUTHORIZER_CONFIGURATION_ERROR,
    code: 'INTERNAL',
    message: 'An unexpected error occurred in the API gateway.',
  },
  // A valid key with no API Gateway API key in the stage's usage plan (issued before the plan, or
  // `npm run keys` failed half-way): `npm run keys -- revoke` and `create` mend it.
  { type: ResponseType.INVALID_API_KEY, code: 'FORBIDDEN', message: 'This API key is not enabled for this stage.' },
  {
    type: ResponseType.QUOTA_EXCEEDED,
    code: 'TOO_MANY_REQUESTS',
    message: "This API key's daily request quota is used up; it renews at 00:00 UTC.",
    // A gateway response's headers are fixed: an hour, rather than the time left until midnight.
    headers: { 'Retry-After': String(QUOTA_RETRY_AFTER_SECONDS) },
  },
];

export const GATEWAY_ERRORS: readonly GatewayError[] = [
  // A method/path with no API method. The `{proxy+}` mock answers unknown paths first; this
  // covers whatever still falls through (the API uses no IAM auth, so this type only ever
  // means "no such route" here, never a missing token).
  { type: ResponseType.MISSING_AUTHENTICATION_TOKEN, code: 'NOT_FOUND', message: NOT_FOUND_MESSAGE },
  { type: ResponseType.RESOURCE_NOT_FOUND, code: 'NOT_FOUND', message: NOT_FOUND_MESSAGE },
  { type: ResponseType.BAD_REQUEST_BODY, code: 'VALIDATION_FAILED', message: 'Invalid body.' },
  { type: ResponseType.BAD_REQUEST_PARAMETERS, code: 'VALIDATION_FAILED', message: 'Invalid request parameters.' },
  // No REQUEST_TOO_LARGE: "Customizing the default gateway response for 413 REQUEST_TOO_LARGE isn't
  // currently supported" (API Gateway, "Important notes for REST APIs"). A request over 10 MB, or
  // over Lambda's 6 MB invoke payload, gets API Gateway's own {"message":"Request Too Long"}.
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
  ...KEY_AUTHORIZER_ERRORS,
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
const GATEWAY_REQUEST_ID = '$context.requestId';

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
  messageFor('$context.httpMethod', path, allow);

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
