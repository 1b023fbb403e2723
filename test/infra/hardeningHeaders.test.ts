/**
 * Every answer API Gateway or the web ACL gives by itself carries the headers of every answer
 * (lib/http/responses.ts HARDENING_HEADERS: `Cache-Control: no-store`, `X-Content-Type-Options:
 * nosniff`), as the functions' answers do: each gateway response, each mock method's response (the
 * 404/405 mocks, and CORS preflight where a stage has origins), each custom response of the web ACL.
 * Read from the synthesized templates, so a new answer without them fails here.
 */
import { App } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { PetStoreStack } from '../../infra/stack.ts';
import { STAGE_SETTINGS, STAGES } from '../../infra/stages.ts';
import { cdkJsonContext, synthesize, type SynthesizedStack } from './synth.ts';
import { props, synthesizedStages } from './templates.ts';

const EXPECTED = { 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' };
const of = synthesizedStages();

/** Each mock method's integration responses and method responses, by the method's logical id. */
function mockResponses(s: SynthesizedStack): [string, Record<string, any>, Record<string, any>][] {
  return s
    .ofType('AWS::ApiGateway::Method')
    .filter(([, method]) => (props(method).Integration as { Type?: string } | undefined)?.Type === 'MOCK')
    .flatMap(([id, method]) => {
      const { Integration, MethodResponses } = props(method) as Record<string, any>;
      return (Integration.IntegrationResponses as Record<string, any>[]).map(
        (response) =>
          [
            `${id} ${response.StatusCode}`,
            response,
            (MethodResponses as Record<string, any>[]).find((declared) => declared.StatusCode === response.StatusCode)!,
          ] as [string, Record<string, any>, Record<string, any>],
      );
    });
}

function expectMockResponsesHardened(s: SynthesizedStack): number {
  const responses = mockResponses(s);
  for (const [where, response, declared] of responses) {
    for (const [name, value] of Object.entries(EXPECTED)) {
      expect(response.ResponseParameters?.[`method.response.header.${name}`], where).toBe(`'${value}'`);
      expect(declared?.ResponseParameters?.[`method.response.header.${name}`], where).toBe(true);
    }
  }
  return responses.length;
}

describe.each(STAGES)('%s: the answers API Gateway gives by itself', (stage) => {
  it('every gateway response carries them', () => {
    const responses = of(stage).ofType('AWS::ApiGateway::GatewayResponse');
    expect(responses.length).toBeGreaterThan(10);
    for (const [id, response] of responses) {
      const parameters = props(response).ResponseParameters as Record<string, string>;
      for (const [name, value] of Object.entries(EXPECTED))
        expect(parameters[`gatewayresponse.header.${name}`], id).toBe(`'${value}'`);
    }
  });

  it('every mock method (404, 405) maps and declares them', () => {
    expect(expectMockResponsesHardened(of(stage))).toBeGreaterThanOrEqual(4);
  });
});

it('the CORS preflight of a stage with origins maps and declares them', () => {
  const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
  const stack = new PetStoreStack(app, 'PetStore-cors', {
    settings: { ...STAGE_SETTINGS.staging, corsAllowedOrigins: ['https://app.example'] },
  });
  const s = synthesize(stack);
  const preflights = mockResponses(s).filter(([, response]) => response.StatusCode === '204');
  expect(preflights).toHaveLength(2);
  expectMockResponsesHardened(s);
});

it("every custom response of production's web ACL carries them", () => {
  const [, acl] = of('production').ofType('AWS::WAFv2::WebACL')[0]!;
  const custom = (props(acl).Rules as Record<string, any>[])
    .map((rule) => [rule.Name as string, rule.Action?.Block?.CustomResponse] as const)
    .filter(([, response]) => response !== undefined);
  expect(custom.map(([name]) => name)).toEqual([
    'RatePerAddress',
    'NoBodyOnGet',
    'BodyOverLimit',
    'WellFormedBearerKey',
    'RatePerKey',
  ]);
  for (const [name, response] of custom) {
    const headers = Object.fromEntries(
      (response.ResponseHeaders as { Name: string; Value: string }[]).map(({ Name, Value }) => [Name, Value]),
    );
    expect(headers, name).toMatchObject(EXPECTED);
  }
});
