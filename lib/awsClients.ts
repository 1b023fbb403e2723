/**
 * Settings every AWS client of the service shares: bounded timeouts and retries, so a slow
 * dependency costs a request a few seconds rather than the Lambda's whole timeout.
 */
export const boundedClientConfig = {
  maxAttempts: 3,
  requestHandler: { connectionTimeout: 1_000, requestTimeout: 3_000 },
} as const;

/** The endpoint setting of a client: AWS's own when unset, else this one (dynalite, a stand-in). */
export const endpointConfig = (endpoint: string | undefined) => (endpoint ? { endpoint } : {});
