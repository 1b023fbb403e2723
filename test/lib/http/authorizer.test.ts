/** The key authorizer's answers (lib/http/authorizer.ts), as API Gateway reads them. */
import type { APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { StaticApiKeys, digestKey, keyIdOfKey, type ApiKeyStore } from '../../../lib/domain/apiKeys.ts';
import { UNAUTHORIZED, createAuthorizer, stageArnOf } from '../../../lib/http/authorizer.ts';
import { generateApiKey } from '../../../tools/keys/keys.ts';

const METHOD_ARN = 'arn:aws:execute-api:us-east-1:123456789012:abc123/v1/GET/pets/7';
const event = (headers: Record<string, string>): APIGatewayRequestAuthorizerEvent =>
  ({ type: 'REQUEST', methodArn: METHOD_ARN, headers }) as unknown as APIGatewayRequestAuthorizerEvent;

describe('the key authorizer', () => {
  const { key } = generateApiKey();
  const authorize = createAuthorizer(new StaticApiKeys([key]));

  it("allows a valid key on the whole stage, naming it by the id keys list prints and handing over its digest as usageIdentifierKey", async () => {
    const result = await authorize(event({ AUTHORIZATION: `Bearer ${key}` }));
    const digest = digestKey(key);
    expect(result).toEqual({
      principalId: keyIdOfKey(key),
      policyDocument: {
        Version: '2012-10-17',
        Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: 'arn:aws:execute-api:us-east-1:123456789012:abc123/v1/*' }],
      },
      context: { keyId: keyIdOfKey(key) },
      usageIdentifierKey: digest.toString('hex'),
    });
    expect(JSON.stringify(result)).not.toContain(key);
  });

  it.each([[{}], [{ Authorization: 'Bearer nope' }], [{ Authorization: `Basic ${key}` }], [{ Authorization: `Bearer ${generateApiKey().key}` }]])(
    'refuses %j with exactly "Unauthorized", the error API Gateway answers 401',
    async (headers) => {
      await expect(authorize(event(headers))).rejects.toThrow(new Error(UNAUTHORIZED));
    },
  );

  it('fails otherwise (AUTHORIZER_FAILURE, 503) when the key store cannot be read', async () => {
    const broken: ApiKeyStore = { keyDigests: () => Promise.reject(new Error('table unreachable')) };
    const failed = await createAuthorizer(broken)(event({ Authorization: `Bearer ${key}` })).catch((error: Error) => error);
    expect(failed).toBeInstanceOf(Error);
    expect((failed as Error).message).not.toBe(UNAUTHORIZED);
  });

  it('covers every method and path of the stage', () => {
    expect(stageArnOf('arn:aws:execute-api:eu-west-1:1:api/v1/POST/pets')).toBe('arn:aws:execute-api:eu-west-1:1:api/v1/*');
  });
});
