/**
 * Each request's time budget for store calls. A hung store (it accepts the connection and never
 * answers) must cost a client a few seconds and a 503, not the Lambda's whole timeout: every
 * DynamoDB call of a request is aborted at the request's deadline, whatever retries remain.
 *
 * The deadline lives in AsyncLocalStorage so that the pet store and the idempotency records read
 * it without every method taking a signal; outside a request (scripts, set-up) calls are unbounded
 * beyond the client's own timeouts.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** The most a request spends on the store: 503 within about 3 s of a hang, locally and on AWS. */
export const STORE_BUDGET_MS = 2_500;
/** Time kept back to answer (and log) once the store budget is spent, when the Lambda has less left. */
export const ANSWER_MARGIN_MS = 1_000;

const deadlines = new AsyncLocalStorage<number>();

/** The store budget of a request whose function has `remainingMs` left (unknown: the full budget `cap`). */
export function storeBudget(remainingMs: number | undefined, cap = STORE_BUDGET_MS): number {
  const available = remainingMs === undefined ? cap : remainingMs - ANSWER_MARGIN_MS;
  return Math.max(0, Math.min(cap, available));
}

/** Runs `work` with a deadline `budgetMs` from now for every store call it makes. */
export const withDeadline = <T>(budgetMs: number, work: () => Promise<T>): Promise<T> =>
  deadlines.run(Date.now() + budgetMs, work);

/** The current request's deadline (epoch ms), if any. */
export const currentDeadline = (): number | undefined => deadlines.getStore();

/** An abort signal that fires at the current request's deadline; none outside a request. */
export function deadlineSignal(): AbortSignal | undefined {
  const deadline = currentDeadline();
  return deadline === undefined ? undefined : AbortSignal.timeout(Math.max(1, deadline - Date.now()));
}

/** Runs `work` outside any request's deadline: a load shared by many requests is not aborted at its first caller's. */
export const withoutDeadline = <T>(work: () => Promise<T>): Promise<T> => deadlines.exit(work);

/**
 * `work`, or a TimeoutError (a store fault: 503) at the current request's deadline, whichever comes
 * first. `work` itself goes on: another caller (one with time left) may still use what it yields.
 */
export function untilDeadline<T>(work: Promise<T>, what: string): Promise<T> {
  const deadline = currentDeadline();
  if (deadline === undefined) return work;
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(Object.assign(new Error(`The request's store budget ran out waiting for ${what}.`), { name: 'TimeoutError' })),
      Math.max(0, deadline - Date.now()),
    );
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}
