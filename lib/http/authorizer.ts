/**
 * The REST API's Lambda REQUEST authorizer (functions/authorize.ts, infra/constructs/authorizer.ts):
 * the operations' own bearer check (./auth.ts), run by API Gateway before any operation function,
 * its answer cached per Authorization value. An Allow covers the methods of the key's scope (a read
 * key's only GET: lib/domain/keyScope.ts), names the key (`principalId`, `context.keyId`), carries
 * the digest of the token it checked, when the key expires, its scope and its daily create ceiling, says when the digests it was
 * checked against were read (./authorizerVerdict.ts), and hands API Gateway the key's SHA-256 hex
 * digest as `usageIdentifierKey`: the value of the key's API Gateway API key, whose usage plan gives
 * each key its own throttle and quota. The plaintext key never leaves the request.
 *
 * The keys are read within a store deadline, as an operation's are (lib/store/deadline.ts): a hung
 * table costs a request a few seconds and a 503, not the authorizer's whole timeout. A refusal is
 * the bare `Unauthorized` API Gateway answers 401 with, and writes no line; any other failure writes
 * one ERROR line (`"operation":"authorize"`) before it is answered 503: the metric the authorizer's
 * failure alarm counts (infra/constructs/authorizerMonitoring.ts), which its Lambda `Errors`, counting
 * every refusal too, cannot be.
 */
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent, Context } from 'aws-lambda';
import type { ApiKeyStore } from '../domain/apiKeys.ts';
import { ApiError } from '../domain/errors.ts';
import { SCOPE_METHODS, type KeyScope } from '../domain/keyScope.ts';
import { logError } from '../domain/log.ts';
import type { Deadline } from '../domain/deadline.ts';
import { requestDeadline } from '../store/deadline.ts';
import { AUTH_REALM, authenticateCaller, onlyAuthorization } from './auth.ts';
import { verdictContext } from './authorizerVerdict.ts';

/** The one error message API Gateway answers with its UNAUTHORIZED gateway response (401). */
export const UNAUTHORIZED = 'Unauthorized';

/**
 * What a client is told when this authorizer refuses its key: the UNAUTHORIZED gateway response's
 * message and challenge (infra/gatewayErrors.ts), which the local API answers too. A gateway
 * response cannot tell a missing key from a wrong one, so both get one message and the bare challenge.
 */
export const MISSING_OR_INVALID_KEY_MESSAGE = 'Missing or invalid API key; send "Authorization: Bearer <API_KEY>".';
export const BEARER_CHALLENGE = `Bearer realm="${AUTH_REALM}"`;

/** The operation name of the authorizer's ERROR lines (infra/constructs/authorizerMonitoring.ts counts them). */
export const AUTHORIZER_OPERATION = 'authorize';

export interface AuthorizerOptions {
  /** Each run's budget for reading the keys (lib/store/deadline.ts STORE_BUDGET_MS by default). */
  storeBudgetMs?: number | undefined;
  /** Notes each allowed key's use (lib/store/keyUses.ts, deployed); never throws. None: uses are not recorded. */
  recordUse?: ((keyId: string, deadline: Deadline) => Promise<void>) | undefined;
  now?: () => number;
}

export const createAuthorizer =
  (keys: ApiKeyStore, { storeBudgetMs, recordUse, now = Date.now }: AuthorizerOptions = {}) =>
  async (
    event: APIGatewayRequestAuthorizerEvent,
    context?: Pick<Context, 'getRemainingTimeInMillis' | 'awsRequestId'>,
  ): Promise<APIGatewayAuthorizerResult> => {
    const at = now();
    const deadline = requestDeadline(at, context?.getRemainingTimeInMillis?.(), storeBudgetMs);
    let caller: Awaited<ReturnType<typeof authenticateCaller>>;
    try {
      const authorization = onlyAuthorization(lowerCased(event.headers), lowerCased(event.multiValueHeaders));
      caller = await authenticateCaller(authorization, keys, deadline, at);
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) throw new Error(UNAUTHORIZED);
      // Anything else (the key store cannot be read in time) is AUTHORIZER_FAILURE: a 503, never cached.
      logError(
        { operation: AUTHORIZER_OPERATION, awsRequestId: context?.awsRequestId },
        error instanceof ApiError ? (error.cause ?? error) : error,
      );
      throw error;
    }
    await recordUse?.(caller.keyId, deadline);
    return {
      principalId: caller.keyId,
      policyDocument: {
        Version: '2012-10-17',
        // The answer is cached per key for every method, so it allows each method of the key's scope
        // on the whole stage, whichever method asked first: API Gateway refuses the others 403.
        Statement: [
          { Action: 'execute-api:Invoke', Effect: 'Allow', Resource: scopeArns(event.methodArn, caller.scope) },
        ],
      },
      // What the operation functions read instead of the keys while it is fresh (./authorizerVerdict.ts).
      context: verdictContext(caller),
      usageIdentifierKey: caller.digest.toString('hex'),
    };
  };

/** `arn:…:execute-api:<region>:<account>:<api>/<stage>/<VERB>/<path>` -> `…:<api>/<stage>/*`. */
export function stageArnOf(methodArn: string): string {
  return `${stagePrefixOf(methodArn)}/*`;
}

/** The method ARNs of the stage that `scope` may call: `…/<stage>/*` (write), `…/<stage>/GET/*` (read). */
function scopeArns(methodArn: string, scope: KeyScope): string[] {
  const stage = stagePrefixOf(methodArn);
  return SCOPE_METHODS[scope].map((method) => (method === '*' ? `${stage}/*` : `${stage}/${method}/*`));
}

const stagePrefixOf = (methodArn: string): string => methodArn.split('/').slice(0, 2).join('/');

/**
 * A REQUEST authorizer's headers keep the case the client sent: names lower-cased, values of names
 * that differ only in case together (the last one wins in `headers`, as API Gateway's does).
 */
function lowerCased<V>(headers: Record<string, V | undefined> | null | undefined): Record<string, V> {
  const lowered: Record<string, V> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (value === undefined) continue;
    const key = name.toLowerCase();
    const before = lowered[key];
    lowered[key] = (Array.isArray(before) && Array.isArray(value) ? [...before, ...value] : value) as V;
  }
  return lowered;
}
