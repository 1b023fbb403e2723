/**
 * What never reaches a method (no Host, a method Node's parser does not know, headers over the API's
 * quota) is answered in the shape the caller gives (`edgeErrors`), else in API Gateway's own
 * `{"message": ...}`: the emulator holds no error shape of a product. A template written here, with
 * one REST API and its stage, is all it needs.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { EdgeError } from '@petstore/local-kit/httpEdges';
import type { CfnTemplate } from '../src/cloudAssembly.ts';
import { OFFLINE_ENVIRONMENT, TemplateResolver } from '../src/intrinsics.ts';
import { startRestApiEmulator, type RestApiEmulator, type RestApiEmulatorOptions } from '../src/restApi.ts';
import { rawExchange } from '../../../test/support/rawHttp.ts';

const template: CfnTemplate = {
  Resources: {
    Api: { Type: 'AWS::ApiGateway::RestApi', Properties: { Name: 'Fixture' } },
    Stage: { Type: 'AWS::ApiGateway::Stage', Properties: { RestApiId: { Ref: 'Api' }, StageName: 'v1' } },
  },
};

let running: RestApiEmulator | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

async function start(options: Partial<RestApiEmulatorOptions> = {}): Promise<number> {
  running = await startRestApiEmulator({
    template,
    resolver: new TemplateResolver({ stackName: 'Fixture', template }),
    env: OFFLINE_ENVIRONMENT,
    invoke: async () => ({ kind: 'ok', payload: {} }),
    log: () => undefined,
    ...options,
  });
  return Number(new URL(running.origin).port);
}

describe('edge errors', () => {
  it("are API Gateway's own {message} shape by default", async () => {
    const port = await start();
    const answer = await rawExchange(port, 'GET /v1/anything HTTP/1.1\r\n\r\n');
    expect(answer.status).toBe(400);
    expect(answer.headers['content-type']).toBe('application/json');
    expect(answer.headers['x-amzn-requestid']).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(answer.body)).toEqual({ message: 'An HTTP/1.1 request must carry a Host header.' });
    expect(answer.headers.connection).toBe('close');
  });

  it("are written in the caller's shape: a request answered gets its id, a socket the parser gave up on none", async () => {
    const seen: { error: EdgeError; requestId: string | undefined }[] = [];
    const port = await start({
      edgeErrors: (error, requestId) => {
        seen.push({ error, requestId });
        return {
          status: error.status,
          headers: { 'Content-Type': 'text/plain' },
          body: `${error.code}: ${error.message}`,
        };
      },
    });
    const noHost = await rawExchange(port, 'GET /v1/anything HTTP/1.1\r\n\r\n');
    expect(noHost).toMatchObject({
      status: 400,
      body: 'VALIDATION_FAILED: An HTTP/1.1 request must carry a Host header.',
    });
    const brew = await rawExchange(port, 'BREW /v1/anything HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(brew).toMatchObject({ status: 501, body: 'NOT_IMPLEMENTED: The request method is not one this API knows.' });
    const huge = await rawExchange(port, `GET /v1/${'a'.repeat(9_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(huge.status).toBe(431);
    expect(huge.body).toMatch(/^HEADERS_TOO_LARGE: The request URL is longer than the 8192 characters/);
    expect(seen.map(({ error, requestId }) => [error.code, typeof requestId])).toEqual([
      ['VALIDATION_FAILED', 'string'],
      ['NOT_IMPLEMENTED', 'undefined'],
      ['HEADERS_TOO_LARGE', 'string'],
    ]);
  });
});
