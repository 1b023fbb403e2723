/**
 * Each request's time budget for store calls. A hung store (it accepts the connection and never
 * answers) must cost a client a few seconds and a 503, not the Lambda's whole timeout: every
 * DynamoDB call of a request is aborted at the request's deadline, whatever retries remain.
 *
 * The deadline (epoch ms) travels explicitly with what the store is called with: the pipeline
 * (lib/http/pipeline.ts) hands each operation the service's tables carrying the request's deadline
 * (`StoreTable.deadline`, lib/store/dynamo.ts), and the caches' callers pass theirs in. Outside a
 * request (scripts, set-up) the tables carry none, and calls are unbounded beyond the client's own
 * timeouts. Not AsyncLocalStorage: on Node 22 its first use installs promise hooks that every
 * promise the SDK creates then runs, a few milliseconds of a cold start (docs/performance.md).
 */

/** The most a request spends on the store: 503 within about 3 s of a hang, locally and on AWS. */
export const STORE_BUDGET_MS = 2_500;
/** Time kept back to answer (and log) once the store budget is spent, when the Lambda has less left. */
export const ANSWER_MARGIN_MS = 1_000;

/** The store budget of a request whose function has `remainingMs` left (unknown: the full budget `cap`). */
export function storeBudget(remainingMs: number | undefined, cap = STORE_BUDGET_MS): number {
  const available = remainingMs === undefined ? cap : remainingMs - ANSWER_MARGIN_MS;
  return Math.max(0, Math.min(cap, available));
}

/** An abort signal that fires at `deadline` (epoch ms); none without a deadline (outside a request). */
export const deadlineSignal = (deadline: number | undefined): AbortSignal | undefined =>
  deadline === undefined ? undefined : AbortSignal.timeout(Math.max(1, deadline - Date.now()));

/**
 * `work`, or a TimeoutError (a store fault: 503) at `deadline`, whichever comes first; `work` alone
 * without a deadline. `work` itself goes on: another caller (one with time left) may still use what it yields.
 */
export function untilDeadline<T>(work: Promise<T>, what: string, deadline: number | undefined): Promise<T> {
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
