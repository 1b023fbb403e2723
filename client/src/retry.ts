/**
 * The client's retry rules, the ones the API's docs/clients.md asks of every client:
 * - retried: 503, 504, 429, 409 `IDEMPOTENCY_IN_PROGRESS`, and a request that got no answer
 *   (fetch's TypeError: refused, reset, DNS, TLS). Nothing else: another 4xx or 5xx is final.
 * - the wait: at least `Retry-After` when the answer gives it, plus capped exponential backoff
 *   with full jitter (a random share of min(maxDelayMs, baseDelayMs * 2^(attempt - 1))).
 * - the budget: one call, every attempt and wait included, takes at most `budgetMs`; an attempt
 *   still running at the budget is aborted, and no wait that would end past it is begun.
 */
import { describeFetchFailure, PetStoreError, PetStoreNetworkError } from './errors.ts';

export interface RetryOptions {
  /** The most time one call may take, attempts and waits included. Default 10,000 ms. */
  budgetMs?: number;
  /** The backoff ceiling of the first retry; it doubles with each further retry. Default 100 ms. */
  baseDelayMs?: number;
  /** The largest backoff ceiling. Default 2,000 ms. */
  maxDelayMs?: number;
}

export type RetryPolicy = Required<RetryOptions>;

export const DEFAULT_RETRY: RetryPolicy = { budgetMs: 10_000, baseDelayMs: 100, maxDelayMs: 2_000 };

/** The policy of a call: its own options over the client's over the defaults; refuses nonsense at once. */
export function retryPolicy(...layers: (RetryOptions | undefined)[]): RetryPolicy {
  const policy = { ...DEFAULT_RETRY };
  for (const layer of layers) {
    for (const [name, value] of Object.entries(layer ?? {}) as [keyof RetryPolicy, number | undefined][]) {
      if (value !== undefined) policy[name] = value;
    }
  }
  for (const [name, value] of Object.entries(policy)) {
    if (!Number.isFinite(value) || value < 0 || (name === 'budgetMs' && value === 0)) {
      throw new RangeError(
        `retry.${name} must be a ${name === 'budgetMs' ? 'positive' : 'non-negative'} number of milliseconds, not ${value}`,
      );
    }
  }
  return policy;
}

const RETRIED_STATUSES = new Set([429, 503, 504]);

/** Whether an Error answer is worth another attempt. */
export function isRetriedAnswer(error: PetStoreError): boolean {
  return RETRIED_STATUSES.has(error.status) || (error.status === 409 && error.code === 'IDEMPOTENCY_IN_PROGRESS');
}

/** `Retry-After` in milliseconds: delay-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** How long to wait before attempt `attempt + 1`: Retry-After as a floor, plus full-jitter backoff. */
export function retryDelayMs(
  attempt: number,
  retryAfter: number | undefined,
  policy: RetryPolicy,
  random = Math.random,
): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return (retryAfter ?? 0) + Math.floor(random() * ceiling);
}

/** One attempt's outcome as openapi-fetch gives it. */
export interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

export interface RetryContext {
  policy: RetryPolicy;
  /** The caller's own cancellation: never retried, rethrown as it is. */
  signal?: AbortSignal | undefined;
  /** Carried into the final error of a createPet. */
  idempotencyKey?: string | undefined;
}

/**
 * Runs `send` until it gives a success or a final failure. Each attempt gets a signal that aborts at
 * the budget (or at the caller's signal).
 */
export async function withRetries<T>(
  send: (signal: AbortSignal) => Promise<Answer<T>>,
  context: RetryContext,
): Promise<{ data: T; response: Response }> {
  const { policy, signal: callerSignal, idempotencyKey } = context;
  const started = Date.now();
  const elapsed = () => Date.now() - started;
  for (let attempt = 1; ; attempt++) {
    const budgetSignal = AbortSignal.timeout(Math.max(1, policy.budgetMs - elapsed()));
    const signal = callerSignal ? AbortSignal.any([callerSignal, budgetSignal]) : budgetSignal;
    let failure: PetStoreError | PetStoreNetworkError;
    let retryAfter: number | undefined;
    try {
      const answer = await send(signal);
      if (answer.error === undefined && answer.response.ok)
        return { data: answer.data as T, response: answer.response };
      failure = new PetStoreError(answer.response.status, answer.error, answer.response.headers, idempotencyKey);
      if (!isRetriedAnswer(failure)) throw failure;
      retryAfter = retryAfterMs(answer.response.headers.get('retry-after'));
    } catch (error) {
      if (error instanceof PetStoreError) throw error;
      if (callerSignal?.aborted) throw callerSignal.reason;
      const spent = `${attempt} attempt${attempt === 1 ? '' : 's'} in ${(elapsed() / 1000).toFixed(1)} s`;
      if (budgetSignal.aborted) {
        throw new PetStoreNetworkError(`no answer within the retry budget of ${policy.budgetMs} ms (${spent})`, {
          cause: error,
          attempts: attempt,
          idempotencyKey,
        });
      }
      if (!isNetworkFailure(error)) throw error; // a bug, not the network: never retried
      failure = new PetStoreNetworkError(`${describeFetchFailure(error)} (${spent})`, {
        cause: error,
        attempts: attempt,
        idempotencyKey,
      });
    }
    const wait = retryDelayMs(attempt, retryAfter, policy);
    if (elapsed() + wait >= policy.budgetMs) throw failure;
    await sleep(wait, callerSignal);
  }
}

/**
 * fetch's way of saying the request got no answer: a TypeError, with the system error as its `cause`
 * in Node ("fetch failed"), or with only a message in browsers ("Failed to fetch", "Load failed").
 */
function isNetworkFailure(error: unknown): error is TypeError {
  return error instanceof TypeError && (error.cause !== undefined || /fetch|network|load failed/i.test(error.message));
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
