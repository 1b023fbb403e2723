/**
 * The REST API's Lambda REQUEST authorizer (functions/authorize.ts, infra/constructs/authorizer.ts):
 * the operations' own bearer check (./auth.ts), run by API Gateway before any operation function,
 * its answer cached per Authorization value. An Allow names the key (`principalId`, `context.keyId`),
 * says when the digests it was checked against were read (`context.keysReadAt`),
 * and hands API Gateway the key's SHA-256 hex digest as `usageIdentifierKey`: the value of the key's
 * API Gateway API key, whose usage plan gives each key its own throttle and quota. The plaintext key
 * never leaves the request.
 */
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import type { ApiKeyStore } from '../domain/apiKeys.ts';
import { ApiError } from '../domain/errors.ts';
import { AUTH_REALM, authenticateCaller } from './auth.ts';
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

export const createAuthorizer =
  (keys: ApiKeyStore) =>
  async (event: APIGatewayRequestAuthorizerEvent): Promise<APIGatewayAuthorizerResult> => {
    let caller;
    try {
      caller = await authenticateCaller(headerOf(event.headers, 'authorization'), keys);
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) throw new Error(UNAUTHORIZED);
      // Anything else (the key store cannot be read) is AUTHORIZER_FAILURE: a 503, never cached.
      throw error;
    }
    return {
      principalId: caller.keyId,
      policyDocument: {
        Version: '2012-10-17',
        // The answer is cached per key for every method, so it allows the whole stage.
        Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: stageArnOf(event.methodArn) }],
      },
      // What the operation functions read instead of the keys while it is fresh (./authorizerVerdict.ts).
      context: verdictContext(caller),
      usageIdentifierKey: caller.digest.toString('hex'),
    };
  };

/** `arn:…:execute-api:<region>:<account>:<api>/<stage>/<VERB>/<path>` -> `…:<api>/<stage>/*`. */
export function stageArnOf(methodArn: string): string {
  const [apiArn, stage] = methodArn.split('/');
  return `${apiArn}/${stage}/*`;
}

/** A REQUEST authorizer's headers keep the case the client sent. */
function headerOf(headers: Record<string, string | undefined> | null | undefined, name: string): string | undefined {
  const found = Object.entries(headers ?? {}).filter(([key]) => key.toLowerCase() === name);
  return found.at(-1)?.[1];
}
