/**
 * Settings every AWS client of the service shares: bounded timeouts and retries, so a slow
 * dependency costs a request a few seconds rather than the Lambda's whole timeout. Each request
 * also aborts its calls at its own deadline (lib/store/deadline.ts), so the total stays within budget.
 *
 * `throwOnRequestTimeout` matters: without it the SDK's node handler only logs a warning when
 * `requestTimeout` passes and keeps waiting, so a hung store held every request until the Lambda
 * timed out (a 500 after 10 s, not a 503). Everything else (logger, endpoint, response bodies) is
 * the SDK's own.
 */
export const boundedClientConfig = {
  maxAttempts: 3,
  requestHandler: { connectionTimeout: 1_000, requestTimeout: 1_000, throwOnRequestTimeout: true },
} as const;

/** The endpoint setting of a client: AWS's own when unset, else this one (dynalite, a stand-in). */
export const endpointConfig = (endpoint: string | undefined) => (endpoint ? { endpoint } : {});
