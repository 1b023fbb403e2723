/**
 * The DynamoDB client every store module sends through, and what they share: each call is aborted
 * at the deadline of the table handle it goes through (`abortAt(table.deadline)`, lib/store/deadline.ts),
 * and its faults are classified. Faults that a retry can cure (throttling, timeouts, an unreachable or missing table) become 503
 * SERVICE_UNAVAILABLE here, so every handler answers them the same way; a write whose outcome is
 * unknown (the request may have reached DynamoDB) says so in its 503. The pet operations live one
 * per module (petReads, petWrites, petPages), so each function bundles only the calls it makes.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { serviceUnavailable, writeOutcomeUnknown } from '../domain/errors.ts';
import { boundedClientConfig, endpointConfig } from './awsClients.ts';
import type { Deadline } from '../domain/deadline.ts';

/** One table, through the document client: what each store operation is given. */
export interface StoreTable {
  documents: DynamoDBDocumentClient;
  tableName: string;
  /**
   * When every call through this handle is aborted: the deadline of the request it was scoped to
   * (`withinDeadline`); none outside a request (scripts, set-up), whose calls are unbounded.
   */
  deadline?: Deadline | undefined;
}

/** `table` as one request sees it: its calls aborted at the request's `deadline`. */
export const withinDeadline = <T extends StoreTable>(table: T, deadline: Deadline): T => ({ ...table, deadline });

export interface DynamoClientOptions {
  region?: string | undefined;
  /** A DynamoDB-compatible endpoint (dynalite locally); unset on AWS. */
  endpoint?: string | undefined;
  /** Per-attempt connect and answer timeouts (default `boundedClientConfig`'s 1 s each). */
  attemptTimeoutMs?: number | undefined;
}

export function createDynamoClient({ region, endpoint, attemptTimeoutMs }: DynamoClientOptions): DynamoDBClient {
  const { requestHandler } = boundedClientConfig;
  return new DynamoDBClient({
    ...boundedClientConfig,
    requestHandler: attemptTimeoutMs
      ? { ...requestHandler, connectionTimeout: attemptTimeoutMs, requestTimeout: attemptTimeoutMs }
      : requestHandler,
    region: region ?? 'us-east-1',
    ...endpointConfig(endpoint),
    // A local endpoint takes any credentials; never look for real ones.
    ...(endpoint ? { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
  });
}

export function createDocumentClient(options: DynamoClientOptions): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(createDynamoClient(options), { marshallOptions: { removeUndefinedValues: true } });
}

const RETRYABLE = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'LimitExceededException',
  'InternalServerError',
  'ServiceUnavailable',
  'ResourceNotFoundException',
  'TimeoutError',
  'RequestTimeout',
  'AbortError',
]);
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);

/** Whether an error from the DynamoDB client means "unavailable for now" rather than a bug. */
function isStoreUnavailable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { name, code, $metadata } = error as { name?: string; code?: string; $metadata?: { httpStatusCode?: number } };
  return RETRYABLE.has(name ?? '') || NETWORK_CODES.has(code ?? '') || ($metadata?.httpStatusCode ?? 0) >= 500;
}

/** Errors after which the write surely did not happen: refused before it reached the table. */
const NOT_APPLIED = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'LimitExceededException',
  'ResourceNotFoundException',
]);
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * Whether a failed write may still have been applied: a timeout, an abort or a reset after the
 * request was sent, or a 5xx (DynamoDB documents InternalServerError as "may have succeeded").
 */
export function isWriteOutcomeUnknown(error: unknown): boolean {
  if (!isStoreUnavailable(error)) return false;
  const { name, code, message } = error as { name?: string; code?: string; message?: string };
  const neverConnected = name === 'TimeoutError' && /did not establish a connection/.test(message ?? '');
  return !NOT_APPLIED.has(name ?? '') && !NOT_SENT_CODES.has(code ?? '') && !neverConnected;
}

/** `call`, its store faults that a retry can cure answered 503 SERVICE_UNAVAILABLE; any other error as it is. */
export const unavailableAs503 = <T>(call: Promise<T>): Promise<T> => answerStoreFaults(call, false);

/** `unavailableAs503` for a write: a failure after which the write may have landed is a 503 that says so. */
export const writeUnavailableAs503 = <T>(call: Promise<T>): Promise<T> => answerStoreFaults(call, true);

async function answerStoreFaults<T>(call: Promise<T>, write: boolean): Promise<T> {
  try {
    return await call;
  } catch (error) {
    if (write && isWriteOutcomeUnknown(error)) throw Object.assign(writeOutcomeUnknown(), { cause: error });
    throw isStoreUnavailable(error) ? Object.assign(serviceUnavailable(), { cause: error }) : error;
  }
}

/** Whether a conditional write was refused because its condition did not hold (not a fault). */
export const isConditionFailed = (error: unknown): boolean =>
  (error as { name?: unknown } | null)?.name === 'ConditionalCheckFailedException';
