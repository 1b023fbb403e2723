/**
 * What the OpenAPI document states that the code does not declare by itself: per operation, the
 * error codes it can really answer, its response headers and its prose. Data only, read by the
 * generator (contract/openapi.ts); never imported by functions/ or lib/, so no bundle carries it.
 *
 * Adding an error code or a header to an operation is one line here.
 */
import type { ErrorCode } from '../lib/domain/errors.ts';
import type { OperationName } from '../lib/domain/routes.ts';

/** Response headers the document describes (components/headers). */
export type HeaderName =
  | 'Location'
  | 'Link'
  | 'Deprecation'
  | 'Sunset'
  | 'WWW-Authenticate'
  | 'x-amzn-Remapped-WWW-Authenticate'
  | 'Retry-After'
  | 'Allow'
  | 'Accept-Encoding'
  | 'Idempotent-Replayed'
  | 'X-Request-Id';

export const HEADERS: Readonly<Record<HeaderName, { description: string; example?: string }>> = {
  Location: { description: 'Path of the created pet.', example: '/v1/pets/57627683154107' },
  Link: {
    description:
      'listPets: `<…/v1/pets?limit=N&status=S&cursor=C>; rel="next"` while more pets remain (absent on the last page). ' +
      'getPet: `<…/v1/pets>; rel="successor-version"`, the operation that replaces it. Always absolute: the stage\'s own address.',
    example: '<https://api.example/v1/pets?limit=20&status=available&cursor=eyJ2Ijox.abc>; rel="next"',
  },
  Deprecation: {
    description: 'RFC 9745: when the operation became deprecated (`@` Unix seconds).',
    example: '@1767225600',
  },
  Sunset: {
    description: 'RFC 8594: from this date on the operation answers 410 GONE.',
    example: 'Thu, 05 Dec 2030 00:00:00 GMT',
  },
  'WWW-Authenticate': {
    description:
      'The bearer challenge; `error="invalid_token"` when a token was sent but refused. Every 401 carries it under this ' +
      'name or, from a deployed stage, as `x-amzn-Remapped-WWW-Authenticate`: API Gateway (REST) renames this header ' +
      "of a function's answer.",
    example: 'Bearer realm="petstore"',
  },
  'x-amzn-Remapped-WWW-Authenticate': {
    description:
      'The bearer challenge (`WWW-Authenticate`) as a deployed stage delivers it: API Gateway (REST) renames that header ' +
      'of a Lambda proxy answer (AWS, "Amazon API Gateway important notes for REST APIs"). Read either name.',
    example: 'Bearer realm="petstore"',
  },
  'Retry-After': { description: 'Seconds to wait before retrying.', example: '1' },
  Allow: { description: 'The methods the path allows.', example: 'GET, POST' },
  'Accept-Encoding': {
    description:
      'On a 415 for a content-encoded body (`Content-Encoding` other than `identity`): the only coding the service ' +
      'takes, `identity` (RFC 7694 section 3).',
    example: 'identity',
  },
  'X-Request-Id': {
    description:
      "The request id (API Gateway's): in the access log, the request log and every 5xx body as `requestId`; quote it " +
      "when reporting a failure. API Gateway's own answers carry it as `x-amzn-RequestId` instead.",
    example: 'c6af9ac6-7b61-11e6-9a41-93e8deadbeef',
  },
  'Idempotent-Replayed': {
    description:
      'Present (`true`) when the answer replays the pet an earlier request with the same `Idempotency-Key` created.',
    example: 'true',
  },
};

/** Headers on every answer a function gives, whatever the operation (lib/http/requestLog.ts). */
export const FUNCTION_ANSWER_HEADERS: readonly HeaderName[] = ['X-Request-Id'];

/**
 * The names a 401's challenge arrives under: one of them is always there (test/support/contract.ts
 * checks it), but which depends on the front (API Gateway renames it), so neither is `required`.
 */
export const CHALLENGE_HEADERS: readonly HeaderName[] = ['WWW-Authenticate', 'x-amzn-Remapped-WWW-Authenticate'];

const always = (...names: HeaderName[]): OptionalHeader[] => names.map((name) => ({ name, required: true }));

/** Headers that come with an error code whatever the operation. */
export const ERROR_HEADERS: Partial<Record<ErrorCode, readonly OptionalHeader[]>> = {
  UNAUTHORIZED: CHALLENGE_HEADERS.map((name) => ({ name, required: false })),
  TOO_MANY_REQUESTS: always('Retry-After'),
  SERVICE_UNAVAILABLE: always('Retry-After'),
  IDEMPOTENCY_IN_PROGRESS: always('Retry-After'),
  METHOD_NOT_ALLOWED: always('Allow'),
  // Only when the body's content coding was refused; a 415 for the media type has none.
  UNSUPPORTED_MEDIA_TYPE: [{ name: 'Accept-Encoding', required: false }],
};

/**
 * Errors API Gateway answers by itself for any operation, before or instead of the function
 * (infra/gatewayErrors.ts). They carry the Error body but none of the function's own headers.
 */
// PAYLOAD_TOO_LARGE: a body over API Gateway's 10 MB, or over Lambda's 6 MB invoke limit (found by
// npm run start:deployed), never reaches the function, whatever the operation; API Gateway answers
// it with its own {"message":"Request Too Long"}, which it does not let an API shape (GatewayMessage).
// UNAUTHORIZED, FORBIDDEN, SERVICE_UNAVAILABLE, TOO_MANY_REQUESTS: the key authorizer refuses a missing or
// invalid key before any function runs (and the production web ACL a malformed one), a key outside the
// stage's usage plan, or answers 503 when it cannot read the keys; each key has its own throttle and
// daily quota (docs/operating.md "Keyless traffic and per-key limits").
export const GATEWAY_ERRORS: readonly ErrorCode[] = [
  'UNAUTHORIZED',
  'FORBIDDEN',
  'PAYLOAD_TOO_LARGE',
  'TOO_MANY_REQUESTS',
  'BAD_GATEWAY',
  'SERVICE_UNAVAILABLE',
  'GATEWAY_TIMEOUT',
];

/** Errors the shared pipeline (lib/http/pipeline.ts) can answer for every operation. */
export const PIPELINE_ERRORS: readonly ErrorCode[] = ['UNAUTHORIZED', 'INTERNAL', 'SERVICE_UNAVAILABLE'];

export interface OperationContract {
  readonly description: string;
  readonly success: {
    readonly status: number;
    readonly description: string;
    readonly headers?: readonly OptionalHeader[];
  };
  /** Errors the function itself answers for this operation, beyond PIPELINE_ERRORS. */
  readonly errors: readonly ErrorCode[];
  /** Headers on every answer the function gives (not on GATEWAY_ERRORS). */
  readonly everyAnswerHeaders?: readonly HeaderName[];
  /** Request parameters beyond the path's, by their name in components/parameters. */
  readonly parameters?: readonly ParameterName[];
}

/** The document's reusable request parameters (components/parameters). */
type ParameterName = 'limit' | 'status' | 'cursor' | 'petId' | 'idempotencyKey';

/** A header on a success response; `required: false` when it is present only sometimes. */
export interface OptionalHeader {
  readonly name: HeaderName;
  readonly required: boolean;
}

export const OPERATIONS: Readonly<Record<OperationName, OperationContract>> = {
  listPets: {
    description:
      'A page of pets, optionally of one status. A page holds exactly `limit` pets whenever that many remain; ' +
      'while more remain, `Link: rel="next"` gives the next page (same `limit` and `status`, an opaque cursor). ' +
      "With `status` pets come in ascending `id` order; without it in the table's own, stable order.",
    success: { status: 200, description: 'A page of pets.', headers: [{ name: 'Link', required: false }] },
    errors: ['VALIDATION_FAILED'],
    parameters: ['limit', 'status', 'cursor'],
  },
  createPet: {
    description:
      'Stores a new pet under a fresh id. The body is at most 16 KiB of `application/json`. ' +
      'With an `Idempotency-Key`, a retry (same key, same body, within 24 hours) answers the same pet and creates nothing. ' +
      'A read key is refused 403 `FORBIDDEN`; a write key creates at most its daily number of pets per UTC day ' +
      '(set when the key is issued), past which it is answered 429 `TOO_MANY_REQUESTS` with `Retry-After` until ' +
      '00:00 UTC (a retry that replays a pet is not counted).',
    success: {
      status: 201,
      description: 'The stored pet (or, for a retried `Idempotency-Key`, the pet the first request stored).',
      headers: [
        { name: 'Location', required: true },
        { name: 'Idempotent-Replayed', required: false },
      ],
    },
    errors: [
      'VALIDATION_FAILED',
      'FORBIDDEN',
      'PAYLOAD_TOO_LARGE',
      'UNSUPPORTED_MEDIA_TYPE',
      'IDEMPOTENCY_IN_PROGRESS',
      'GONE',
      'IDEMPOTENCY_KEY_REUSED',
      'TOO_MANY_REQUESTS',
    ],
    parameters: ['idempotencyKey'],
  },
  getPet: {
    description: 'One pet by id. Deprecated: use `GET /v1/pets?status=` instead.',
    success: { status: 200, description: 'The pet.' },
    errors: ['VALIDATION_FAILED', 'NOT_FOUND', 'GONE'],
    everyAnswerHeaders: ['Deprecation', 'Sunset', 'Link'],
  },
};
