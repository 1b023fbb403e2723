/**
 * Each request's time budget for store calls, and how a store call or wait is bounded by the
 * request's `Deadline` (lib/domain/deadline.ts). A hung store (it accepts the connection and never
 * answers) must cost a client a few seconds and a 503, not the Lambda's whole timeout: every
 * DynamoDB call of a request is aborted at the request's deadline, whatever retries remain.
 *
 * The deadline travels explicitly with what the store is called with: the pipeline
 * (lib/http/pipeline.ts) hands each operation the tables carrying its request's deadline
 * (`StoreTable.deadline`, lib/store/dynamo.ts), and the caches' callers pass theirs in. Not
 * AsyncLocalStorage: on Node 22 its first use installs promise hooks that every promise the SDK
 * creates then runs, a few milliseconds of a cold start (docs/performance.md).
 */
import type { Deadline } from '../domain/deadline.ts';

/** The most a request spends on the store: 503 within about 3 s of a hang, locally and on AWS. */
export const STORE_BUDGET_MS = 2_500;
/** Time kept back to answer (and log) once the store budget is spent, when the Lambda has less left. */
export const ANSWER_MARGIN_MS = 1_000;

/** The store budget of a request whose function has `remainingMs` left (unknown: the full budget `cap`). */
export function storeBudget(remainingMs: number | undefined, cap = STORE_BUDGET_MS): number {
  const available = remainingMs === undefined ? cap : remainingMs - ANSWER_MARGIN_MS;
  return Math.max(0, Math.min(cap, available));
}

/** The deadline of a request that started at `startedAt` (epoch ms) with `remainingMs` of its function's time left. */
export const requestDeadline = (startedAt: number, remainingMs: number | undefined, budgetMs?: number): Deadline =>
  startedAt + storeBudget(remainingMs, budgetMs);

/**
 * The one way a store call is bounded: the options of an SDK `send` that abort it at `deadline`;
 * no signal without a deadline (outside a request).
 */
export const abortAt = (deadline: Deadline | undefined): { abortSignal: AbortSignal | undefined } => ({
  abortSignal: deadline === undefined ? undefined : AbortSignal.timeout(Math.max(1, deadline - Date.now())),
});

/**
 * `work`, or a TimeoutError (a store fault: 503) at `deadline`, whichever comes first; `work` alone
 * without a deadline. `work` itself goes on: another caller (one with time left) may still use what it yields.
 */
export function untilDeadline<T>(work: Promise<T>, what: string, deadline: Deadline | undefined): Promise<T> {
  if (deadline === undefined) return work;
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          Object.assign(new Error(`The request's store budget ran out waiting for ${what}.`), { name: 'TimeoutError' }),
        ),
      Math.max(0, deadline - Date.now()),
    );
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}
