/**
 * The REST API's Lambda REQUEST authorizer (functions/authorize.ts, infra/constructs/authorizer.ts):
 * the operations' own bearer check (./auth.ts), run by API Gateway before any operation function,
 * its answer cached per Authorization value. An Allow names the key (`principalId`, `context.keyId`)
 * and hands API Gateway the key's SHA-256 hex digest as `usageIdentifierKey`: the value of the key's
 * API Gateway API key, whose usage plan gives each key its own throttle and quota. The plaintext key
 * never leaves the request.
 */
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import type { ApiKeyStore } from '../domain/apiKeys.ts';
import { ApiError } from '../domain/errors.ts';
import { authenticateCaller } from './auth.ts';

/** The one error message API Gateway answers with its UNAUTHORIZED gateway response (401). */
export const UNAUTHORIZED = 'Unauthorized';

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
      context: { keyId: caller.keyId },
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
