/**
 * The one list of error codes the service answers with, each with its HTTP status.
 * Handlers, the local API and the API Gateway responses all read it.
 */
export const errorStatuses = {
  VALIDATION_FAILED: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  /** The local API and the emulator (headers not all in within the server's time); on AWS the gateway's edge answers it. */
  REQUEST_TIMEOUT: 408,
  IDEMPOTENCY_IN_PROGRESS: 409,
  GONE: 410,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  /** The local API and the emulator (an unknown `Expect`); on AWS the gateway's edge answers it. */
  EXPECTATION_FAILED: 417,
  IDEMPOTENCY_KEY_REUSED: 422,
  TOO_MANY_REQUESTS: 429,
  /** The local API and the emulator (headers over Node's limit); on AWS the gateway's edge answers it. */
  HEADERS_TOO_LARGE: 431,
  INTERNAL: 500,
  /** The local API and the emulator (a method HTTP does not know, e.g. BREW); on AWS the gateway's edge answers it. */
  NOT_IMPLEMENTED: 501,
  BAD_GATEWAY: 502,
  SERVICE_UNAVAILABLE: 503,
  GATEWAY_TIMEOUT: 504,
} as const;

export type ErrorCode = keyof typeof errorStatuses;

/**
 * The Error resource of the spec: `status` always repeats the HTTP status. A 5xx also carries
 * `requestId`, the id of the request (as in the `X-Request-Id` header) for the client to quote.
 */
export interface ErrorBody {
  code: ErrorCode;
  message: string;
  status: number;
  requestId?: string;
}

/** An error whose message is safe to show to the client. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: ErrorCode, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.status = errorStatuses[code];
    this.headers = headers;
  }

  toBody(): ErrorBody {
    return { code: this.code, message: this.message, status: this.status };
  }
}

/** Seconds a client should wait before retrying when the store is unavailable. */
export const RETRY_AFTER_SECONDS = 1;

export const serviceUnavailable = (): ApiError =>
  new ApiError('SERVICE_UNAVAILABLE', 'The pet store is temporarily unavailable; retry later.', {
    'Retry-After': String(RETRY_AFTER_SECONDS),
  });

/** A write that may or may not have been applied: the client must not take it for a clean failure. */
export const writeOutcomeUnknown = (): ApiError =>
  new ApiError(
    'SERVICE_UNAVAILABLE',
    'The pet store did not confirm the write in time: the pet may or may not have been stored. ' +
      'Retry with the same Idempotency-Key to get the stored pet; without one, check the list before retrying.',
    { 'Retry-After': String(RETRY_AFTER_SECONDS) },
  );

/** Maps a status that a library raised (for example middy's parser) onto our codes. */
export function codeForStatus(status: number): ErrorCode {
  // 422 is what middy's JSON parser answers for malformed JSON: the spec calls that a 400.
  if (status === 422) return 'VALIDATION_FAILED';
  const found = (Object.keys(errorStatuses) as ErrorCode[]).find((code) => errorStatuses[code] === status);
  if (found) return found;
  return status >= 500 ? 'INTERNAL' : 'VALIDATION_FAILED';
}
