/** The two ways a call can finally fail: an Error answer of the API, or no answer at all. */
import type { components } from './schema.ts';

export type ErrorBody = components['schemas']['Error'];
export type ErrorCode = ErrorBody['code'];

/**
 * An Error answer of the API (after any retries). `code` is the body's code, or `UNKNOWN` when the
 * answer did not carry the API's Error body (something between you and the API answered).
 */
export class PetStoreError extends Error {
  readonly status: number;
  readonly code: ErrorCode | 'UNKNOWN';
  /** The id to quote when reporting the failure: the body's `requestId`, else `X-Request-Id`, else `x-amzn-RequestId`. */
  readonly requestId: string | undefined;
  /** The Error body as the API sent it (undefined when it sent none). */
  readonly body: ErrorBody | undefined;
  readonly headers: Headers;
  /** For createPet: the `Idempotency-Key` every attempt carried; retry with it to create at most one pet. */
  readonly idempotencyKey: string | undefined;

  constructor(status: number, body: unknown, headers: Headers, idempotencyKey?: string) {
    const errorBody = isErrorBody(body) ? body : undefined;
    const requestId =
      errorBody?.requestId ?? headers.get('x-request-id') ?? headers.get('x-amzn-requestid') ?? undefined;
    const message = errorBody?.message ?? (typeof body === 'string' && body ? body.slice(0, 200) : `HTTP ${status}`);
    super(`${status} ${errorBody?.code ?? 'UNKNOWN'}: ${message}${requestId ? ` (request id ${requestId})` : ''}`);
    this.name = 'PetStoreError';
    this.status = status;
    this.code = errorBody?.code ?? 'UNKNOWN';
    this.requestId = requestId;
    this.body = errorBody;
    this.headers = headers;
    this.idempotencyKey = idempotencyKey;
  }
}

/**
 * No answer: the connection failed (refused, reset, DNS, TLS) or none came within the retry budget.
 * The message names the cause as the network gave it, e.g. `fetch failed: ECONNREFUSED 127.0.0.1:3917`;
 * `cause` is the last underlying error.
 */
export class PetStoreNetworkError extends Error {
  readonly attempts: number;
  /** For createPet: the `Idempotency-Key` every attempt carried; the pet may have been stored, so retry with it. */
  readonly idempotencyKey: string | undefined;

  constructor(message: string, options: { cause: unknown; attempts: number; idempotencyKey?: string | undefined }) {
    super(message, { cause: options.cause });
    this.name = 'PetStoreNetworkError';
    this.attempts = options.attempts;
    this.idempotencyKey = options.idempotencyKey;
  }
}

function isErrorBody(body: unknown): body is ErrorBody {
  return (
    typeof body === 'object' &&
    body !== null &&
    typeof (body as ErrorBody).code === 'string' &&
    typeof (body as ErrorBody).message === 'string'
  );
}

interface SystemErrorLike {
  code?: unknown;
  address?: unknown;
  port?: unknown;
  hostname?: unknown;
  message?: unknown;
  errors?: unknown;
  cause?: unknown;
}

/**
 * What a failed fetch says about its cause, in one line: `fetch failed: ECONNREFUSED 127.0.0.1:3917`,
 * `fetch failed: ENOTFOUND api.example`, or the TLS error's code. Node's fetch hides these in
 * `error.cause` (an AggregateError when several addresses were tried).
 */
export function describeFetchFailure(error: unknown): string {
  const outer = error instanceof Error ? error.message : String(error);
  const cause = (error as SystemErrorLike | undefined)?.cause;
  const detail = describeCause(cause);
  return detail && detail !== outer ? `${outer}: ${detail}` : outer;
}

function describeCause(cause: unknown): string | undefined {
  if (typeof cause !== 'object' || cause === null) return cause === undefined ? undefined : String(cause);
  const system = cause as SystemErrorLike;
  if (Array.isArray(system.errors) && system.errors.length > 0) {
    const parts = [...new Set(system.errors.map((inner) => describeCause(inner)).filter(Boolean))];
    return parts.join(', ');
  }
  const where =
    typeof system.address === 'string'
      ? `${system.address}${system.port !== undefined ? `:${String(system.port)}` : ''}`
      : typeof system.hostname === 'string'
        ? system.hostname
        : undefined;
  if (typeof system.code === 'string')
    return where ? `${system.code} ${where}` : `${system.code}${messageOf(system, system.code)}`;
  return typeof system.message === 'string' ? system.message : String(cause);
}

const messageOf = (system: SystemErrorLike, code: string): string =>
  typeof system.message === 'string' && system.message && !system.message.includes(code) ? ` (${system.message})` : '';
