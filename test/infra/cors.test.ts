/** CORS per stage: off by default (no preflight, no variable); with origins, preflight on every route resource. */
import { App } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { PetStoreStack } from '../../infra/stack.ts';
import { STAGE_SETTINGS } from '../../infra/stages.ts';
import { CORS_ORIGINS_VARIABLE } from '../../lib/http/cors.ts';
import { cdkJsonContext, synthesize, testApp } from './synth.ts';

const ORIGINS = ['https://app.example', 'https://admin.example'];

describe('CORS', () => {
  it('is off on both stages by default: no OPTIONS method, no origins variable', () => {
    for (const stack of testApp().stacks.values()) {
      const s = synthesize(stack);
      s.template.resourcePropertiesCountIs('AWS::ApiGateway::Method', { HttpMethod: 'OPTIONS' }, 0);
      for (const [, fn] of s.ofType('AWS::Lambda::Function')) {
        const variables =
          (fn.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
        expect(variables[CORS_ORIGINS_VARIABLE]).toBeUndefined();
      }
    }
  });

  it('with origins set on a stage, passes them to every function and answers preflight on each route resource', () => {
    const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
    const stack = new PetStoreStack(app, 'PetStore-cors', {
      settings: { ...STAGE_SETTINGS.staging, corsAllowedOrigins: ORIGINS },
    });
    const s = synthesize(stack);
    s.template.resourcePropertiesCountIs('AWS::ApiGateway::Method', { HttpMethod: 'OPTIONS' }, 2);
    s.template.hasResourceProperties('AWS::ApiGateway::Method', {
      HttpMethod: 'OPTIONS',
      AuthorizationType: 'NONE',
      Integration: Match.objectLike({
        Type: 'MOCK',
        IntegrationResponses: [
          Match.objectLike({
            StatusCode: '204',
            ResponseParameters: Match.objectLike({
              'method.response.header.Access-Control-Allow-Methods': "'GET,POST'",
              'method.response.header.Access-Control-Allow-Headers': "'Authorization,Content-Type,Idempotency-Key'",
            }),
          }),
        ],
      }),
    });
    // The operations' functions; the key authorizer answers no browser itself (its refusals are gateway responses).
    const functions = s
      .ofType('AWS::Lambda::Function')
      .filter(
        ([id, fn]) => (fn.Properties?.Handler as string) === 'index.handler' && !id.startsWith('AuthorizerFunction'),
      );
    expect(functions).toHaveLength(3);
    for (const [, fn] of functions) {
      const environment = fn.Properties?.Environment as { Variables: Record<string, unknown> } | undefined;
      expect(environment?.Variables[CORS_ORIGINS_VARIABLE]).toBe(ORIGINS.join(','));
    }
  });
});
