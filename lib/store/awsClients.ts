/**
 * Settings every AWS client of the service shares: bounded timeouts and retries, so a slow
 * dependency costs a request a few seconds rather than the Lambda's whole timeout. Each request
 * also aborts its calls at its own deadline (lib/store/deadline.ts), so the total stays within budget.
 *
 * `throwOnRequestTimeout` matters: without it the SDK's node handler only logs a warning when
 * `requestTimeout` passes and keeps waiting, so a hung store held every request until the Lambda
 * timed out (a 500 after 10 s, not a 503). The logger is as silent as the SDK's default, with less
 * work per call (`sdkLogger`), and response bodies are read without the SDK's stream piping, which a
 * cold start pays for (lib/store/responseBody.ts).
 */
import type { DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { collectResponseBody } from './responseBody.ts';

export const boundedClientConfig = {
  maxAttempts: 3,
  logger: sdkLogger(),
  // The client's own setting for reading response bodies (typed, though the SDK marks it internal).
  streamCollector: collectResponseBody,
  requestHandler: { connectionTimeout: 1_000, requestTimeout: 1_000, throwOnRequestTimeout: true },
} as const;

/** The endpoint setting of a client: AWS's own when unset, else this one (dynalite, a stand-in). */
export const endpointConfig = (endpoint: string | undefined) => (endpoint ? { endpoint } : {});

/**
 * The clients' logger: silent, as the SDK's default (`NoOpLogger`) is, but without `info`. After
 * every call the SDK's logger middleware builds an `info` entry (the call's input and output, each
 * filtered for sensitive members through the operation's schema) when `logger?.info?.` exists, and
 * the default's no-op `info` exists: each call built an entry only to drop it, a whole listing page
 * walked twice (under 1 ms of a cold start's first call, about 6% of a warm 20-item Scan:
 * docs/performance.md). The other methods stay, as no-ops: the SDK calls `debug` and `warn`
 * unguarded (its environment credential provider calls `logger.debug`). `info` is the one method
 * the SDK only ever calls guarded; the SDK's `Logger` type still lists it, hence the cast.
 */
function sdkLogger(): NonNullable<DynamoDBClientConfig['logger']> {
  const silent = () => {};
  const withoutInfo = { trace: silent, debug: silent, warn: silent, error: silent };
  return withoutInfo as typeof withoutInfo & { info: typeof silent };
}
