/**
 * The deployed runner's REST API emulator, serving the synthesized staging template (no bundling)
 * over real HTTP on loopback, with a recording stand-in for the functions.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type OutgoingHttpHeaders } from 'node:http';
import { once } from 'node:events';
import { createServer, Server as NetServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import type { CfnTemplate } from '../../tools/stage-emulator/src/cloudAssembly.ts';
import { OFFLINE_ENVIRONMENT as OFFLINE, TemplateResolver } from '../../tools/stage-emulator/src/intrinsics.ts';
import type { InvokeOutcome } from '../../tools/stage-emulator/src/lambdaFunction.ts';
import { LambdaFunctionHost } from '../../tools/stage-emulator/src/lambdaHost.ts';
import { PROXY_RESPONSE_HEADER_RULES } from '../../tools/stage-emulator/src/proxyIntegration.ts';
import { REQUEST_LIMITS, startRestApiEmulator, type RestApiEmulator } from '../../tools/stage-emulator/src/restApi.ts';
import { testApp, synthesize } from '../infra/synth.ts';
import { escapeJavaScript, renderTemplate } from '../../tools/stage-emulator/src/velocity.ts';
import { PARSER_EDGE_REQUESTS, rawExchange } from '../support/rawHttp.ts';
import { fixtureFunction } from '../support/lambdaFixture.ts';
import { EDGE_ERRORS } from '../../local/stageApp.ts';

type Resources = CfnTemplate['Resources'];

/** The staging template with its methods' key authorizer taken off: the integrations' own tests. */
let template: CfnTemplate;
/** As synthesized: the key authorizer on every route method, and the usage plan. */
let keyedTemplate: CfnTemplate;
const running: RestApiEmulator[] = [];

beforeAll(() => {
  const { stacks } = testApp({ stages: ['staging'] });
  keyedTemplate = synthesize(stacks.get('staging')!).json as CfnTemplate;
  template = withoutKeyAuthorizer(keyedTemplate);
});

function withoutKeyAuthorizer(keyed: CfnTemplate): CfnTemplate {
  const open = structuredClone(keyed);
  for (const resource of Object.values(open.Resources).filter((r) => r.Type === 'AWS::ApiGateway::Method')) {
    const properties = resource.Properties!;
    properties.AuthorizationType = 'NONE';
    delete properties.AuthorizerId;
    delete properties.ApiKeyRequired;
  }
  return open;
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((emulator) => emulator.close()));
});

interface Recorded {
  functionArn: string;
  event: any;
}

const okResult = { statusCode: 200, headers: { 'Content-Type': 'application/json' }, body: '{"ok":true}' };

async function start(
  options: {
    template?: CfnTemplate;
    answer?: (event: any) => Promise<InvokeOutcome> | InvokeOutcome;
    headersTimeoutMs?: number;
  } = {},
) {
  const used = options.template ?? template;
  const resolver = new TemplateResolver({ stackName: 'PetStore-staging', template: used });
  const calls: Recorded[] = [];
  const emulator = await startRestApiEmulator({
    template: used,
    resolver,
    env: OFFLINE,
    log: () => undefined,
    edgeErrors: EDGE_ERRORS,
    ...(options.headersTimeoutMs === undefined ? {} : { headersTimeoutMs: options.headersTimeoutMs }),
    invoke: async (functionArn, event) => {
      calls.push({ functionArn, event });
      return options.answer ? options.answer(event) : { kind: 'ok', payload: okResult };
    },
  });
  running.push(emulator);
  return { emulator, calls, resolver };
}

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  text: string;
  json(): any;
}

/** A raw HTTP request (repeated headers stay separate lines, bodies stay bytes). */
function send(
  url: string,
  {
    method = 'GET',
    headers = {},
    body,
  }: { method?: string; headers?: OutgoingHttpHeaders; body?: Buffer | string } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    // An explicit length: Node sends a DELETE's body unframed otherwise.
    const length = body === undefined ? {} : { 'Content-Length': Buffer.byteLength(body) };
    const req = httpRequest(url, { method, headers: { ...length, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const data = Buffer.concat(chunks);
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: data,
          text: data.toString('utf8'),
          json: () => JSON.parse(data.toString('utf8')),
        });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

const logicalIdOf = (
  resources: Resources,
  type: string,
  test: (properties: Record<string, any>) => boolean,
): string => {
  const found = Object.entries(resources).find(
    ([, r]) => r.Type === type && test((r.Properties ?? {}) as Record<string, any>),
  );
  if (!found) throw new Error(`no ${type} in the template`);
  return found[0];
};

const copy = (): CfnTemplate => structuredClone(template);

function expectGatewayHeaders(reply: Reply): void {
  expect(reply.headers['x-amzn-requestid']).toMatch(/^[0-9a-f-]{36}$/);
  expect(reply.headers['x-amz-apigw-id']).toMatch(/^[A-Za-z0-9+/]{15}=$/);
  expect(reply.headers['x-amzn-trace-id']).toMatch(/^Root=1-[0-9a-f]{8}-[0-9a-f]{24}$/);
  expect(reply.headers['content-length']).toBe(String(reply.body.length));
}

/** INTEGRATION_FAILURE through the template's gateway response: 502 BAD_GATEWAY with API Gateway's request id. */
function expectBadGateway(reply: {
  status: number;
  json(): unknown;
  headers: Record<string, string | string[] | undefined>;
}): void {
  expect(reply.status).toBe(502);
  expect(reply.json()).toEqual({
    code: 'BAD_GATEWAY',
    message: 'The pet store failed to answer; retry later.',
    status: 502,
    requestId: reply.headers['x-amzn-requestid'],
  });
}
describe('routing and the mock methods', () => {
  it('answers an unknown path with the {proxy+} mock: the 404 Error body', async () => {
    const { emulator, calls } = await start();
    const reply = await send(`${emulator.url}/nowhere/at/all`);
    expect(reply.status).toBe(404);
    expect(reply.headers['content-type']).toBe('application/json');
    expect(reply.json()).toEqual({ code: 'NOT_FOUND', message: 'No resource exists at this path.', status: 404 });
    expectGatewayHeaders(reply);
    expect(calls).toEqual([]);
  });

  it('answers a known path with another method 405 with Allow, the method rendered by VTL', async () => {
    const { emulator } = await start();
    const reply = await send(`${emulator.url}/pets`, { method: 'DELETE' });
    expect(reply.status).toBe(405);
    expect(reply.headers.allow).toBe('GET, POST');
    expect(reply.json()).toEqual({
      code: 'METHOD_NOT_ALLOWED',
      message: 'The method DELETE is not allowed on /v1/pets; allowed: GET, POST.',
      status: 405,
    });
    const onPet = await send(`${emulator.url}/pets/7`, { method: 'PUT' });
    expect(onPet.headers.allow).toBe('GET');
    expect(onPet.json().message).toBe('The method PUT is not allowed on /v1/pets/{petId}; allowed: GET.');
  });

  it('refuses a mock request whose Content-Type has no request template: the template 415', async () => {
    const { emulator } = await start();
    const reply = await send(`${emulator.url}/pets`, {
      method: 'DELETE',
      headers: { 'Content-Type': 'text/csv' },
      body: 'a,b',
    });
    expect(reply.status).toBe(415);
    expect(reply.json()).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE', status: 415 });
    // A listed type with parameters is still that type.
    const listed = await send(`${emulator.url}/pets`, {
      method: 'DELETE',
      headers: { 'Content-Type': 'text/plain; charset=utf-8' },
      body: 'x',
    });
    expect(listed.status).toBe(405);
  });

  // AWS, "Gateway response types for API Gateway"
  // (https://docs.aws.amazon.com/apigateway/latest/developerguide/supported-gateway-response-types.html):
  // MISSING_AUTHENTICATION_TOKEN, 403, "including the cases when the client attempts to invoke an
  // unsupported API method or resource"; the template's own response of that type is used.
  it('answers paths outside the stage through MISSING_AUTHENTICATION_TOKEN (the template makes it a 404)', async () => {
    const { emulator, calls } = await start();
    for (const path of ['/', '/v2/pets', '/pets', '/v1x/pets']) {
      const reply = await send(`${emulator.origin}${path}`);
      expect(reply.status, path).toBe(404);
      expect(reply.json()).toEqual({ code: 'NOT_FOUND', message: 'No resource exists at this path.', status: 404 });
      expect(reply.headers['x-amzn-errortype']).toBe('MissingAuthenticationTokenException');
    }
    expect(calls).toEqual([]);
  });

  it("falls back to API Gateway's own 403 when the template does not override the type", async () => {
    const changed = copy();
    delete changed.Resources[
      logicalIdOf(
        changed.Resources,
        'AWS::ApiGateway::GatewayResponse',
        (p) => p.ResponseType === 'MISSING_AUTHENTICATION_TOKEN',
      )
    ];
    const { emulator } = await start({ template: changed });
    const reply = await send(`${emulator.origin}/elsewhere`);
    // DEFAULT_4XX is in the template: its status and body, with this type's message.
    expect(reply.status).toBe(403);
    expect(reply.json()).toMatchObject({ code: 'FORBIDDEN', status: 403 });
    delete changed.Resources[
      logicalIdOf(changed.Resources, 'AWS::ApiGateway::GatewayResponse', (p) => p.ResponseType === 'DEFAULT_4XX')
    ];
    const bare = await start({ template: changed });
    const builtIn = await send(`${bare.emulator.origin}/elsewhere`);
    expect(builtIn.status).toBe(403);
    expect(builtIn.json()).toEqual({ message: 'Missing Authentication Token' });
  });
});

describe('AWS_PROXY integrations', () => {
  it('sends getPet the REST proxy event API Gateway builds, and its answer back', async () => {
    const { emulator, calls, resolver } = await start({
      answer: () => ({
        kind: 'ok',
        payload: {
          statusCode: 201,
          headers: { 'X-One': '1', 'X-Both': 'single' },
          multiValueHeaders: { 'X-Both': ['m1', 'm2'] },
          body: 'hello',
        },
      }),
    });
    const reply = await send(`${emulator.url}/pets/abc%20d`, { headers: { 'User-Agent': 'tester/1' } });
    expect(reply.status).toBe(201);
    expect(reply.text).toBe('hello');
    expect(reply.headers['x-one']).toBe('1');
    expect(reply.headers['x-both']).toBe('m1, m2');
    expect(reply.headers['content-type']).toBe('application/json');
    expectGatewayHeaders(reply);

    const resources = template.Resources;
    const petResource = logicalIdOf(resources, 'AWS::ApiGateway::Resource', (p) => p.PathPart === '{petId}');
    const api = logicalIdOf(resources, 'AWS::ApiGateway::RestApi', () => true);
    const alias = logicalIdOf(resources, 'AWS::Lambda::Alias', (p) =>
      JSON.stringify(p.FunctionName).includes('GetPet'),
    );
    expect(calls).toHaveLength(1);
    const [{ functionArn, event }] = calls as [Recorded];
    expect(functionArn).toBe(resolver.ref(alias));
    expect(functionArn).toMatch(/^arn:aws:lambda:us-east-1:123456789012:function:.+:live$/);
    expect(event).toMatchObject({
      resource: '/pets/{petId}',
      path: '/pets/abc%20d',
      httpMethod: 'GET',
      pathParameters: { petId: 'abc d' },
      queryStringParameters: null,
      multiValueQueryStringParameters: null,
      stageVariables: null,
      body: null,
      isBase64Encoded: false,
    });
    expect(event.headers['User-Agent']).toBe('tester/1');
    expect(event.headers['X-Amzn-Trace-Id']).toBe(reply.headers['x-amzn-trace-id']);
    const host = new URL(emulator.origin).host;
    expect(event.requestContext).toMatchObject({
      accountId: '123456789012',
      apiId: resolver.ref(api),
      domainName: host,
      httpMethod: 'GET',
      path: '/v1/pets/abc%20d',
      protocol: 'HTTP/1.1',
      requestId: reply.headers['x-amzn-requestid'],
      extendedRequestId: reply.headers['x-amz-apigw-id'],
      resourceId: resolver.ref(petResource),
      resourcePath: '/pets/{petId}',
      stage: 'v1',
      identity: { sourceIp: '127.0.0.1', userAgent: 'tester/1', accessKey: null, user: null },
    });
    expect(event.requestContext.requestTime).toMatch(/^\d{2}\/[A-Z][a-z]{2}\/\d{4}:\d{2}:\d{2}:\d{2} \+0000$/);
    expect(typeof event.requestContext.requestTimeEpoch).toBe('number');
    expect(event.requestContext).not.toHaveProperty('authorizer');
  });

  // AWS, "Set up Lambda proxy integrations in API Gateway", section "Input format of a Lambda function
  // for proxy integration" (https://docs.aws.amazon.com/apigateway/latest/developerguide/set-up-lambda-proxy-integrations.html#api-gateway-simple-proxy-for-lambda-input-format):
  // "The `headers` key can only contain single-value headers. The `multiValueHeaders` key can contain
  // multi-value headers" (and the same of the query). Which value the single map keeps the page does
  // not word; the last, as the local API (tools/local-kit/src/proxyEvent.ts headersAndQuery) keeps it.
  it('passes repeated headers and query parameters as multi-value maps, the last one as the single value', async () => {
    const { emulator, calls } = await start();
    await send(`${emulator.url}/pets?status=sold&limit=3&status=pending`, { headers: { 'X-Multi': ['a', 'b'] } });
    const [{ event }] = calls as [Recorded];
    expect(event.resource).toBe('/pets');
    expect(event.pathParameters).toBeNull();
    expect(event.multiValueHeaders['X-Multi']).toEqual(['a', 'b']);
    expect(event.headers['X-Multi']).toBe('b');
    expect(event.multiValueQueryStringParameters).toEqual({ status: ['sold', 'pending'], limit: ['3'] });
    expect(event.queryStringParameters).toEqual({ status: 'pending', limit: '3' });
  });

  it('passes bodies as text and base64 answers undecoded, as a REST API without binary media types does', async () => {
    const bytes = Buffer.from([0xff, 0xfe, 0x41]);
    const { emulator, calls } = await start({
      answer: () => ({
        kind: 'ok',
        payload: {
          statusCode: 200,
          headers: { 'Content-Type': 'application/octet-stream' },
          body: bytes.toString('base64'),
          isBase64Encoded: true,
        },
      }),
    });
    const reply = await send(`${emulator.url}/pets`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/octet-stream' },
      body: bytes,
    });
    const [{ event }] = calls as [Recorded];
    expect(event).toMatchObject({ body: bytes.toString('utf8'), isBase64Encoded: false });
    expect(reply.body.toString('utf8')).toBe(bytes.toString('base64'));

    await send(`${emulator.url}/pets`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"name":"Rex é"}',
    });
    expect(calls[1]?.event).toMatchObject({ body: '{"name":"Rex é"}', isBase64Encoded: false });
  });

  it('with binary media types: such a body goes base64, and an answer is decoded for a client that accepts the type', async () => {
    const binary = copy();
    const [, api] = Object.entries(binary.Resources).find(([, r]) => r.Type === 'AWS::ApiGateway::RestApi')!;
    api.Properties = { ...api.Properties, BinaryMediaTypes: ['application/octet-stream'] };
    const bytes = Buffer.from([0xff, 0xfe, 0x00, 0x80, 0x41]);
    const { emulator, calls } = await start({
      template: binary,
      answer: () => ({
        kind: 'ok',
        payload: {
          statusCode: 200,
          headers: { 'Content-Type': 'application/octet-stream' },
          body: bytes.toString('base64'),
          isBase64Encoded: true,
        },
      }),
    });
    const headers = { 'Content-Type': 'application/octet-stream', Accept: 'application/octet-stream, */*' };
    const reply = await send(`${emulator.url}/pets`, { method: 'POST', headers, body: bytes });
    const [{ event }] = calls as [Recorded];
    expect(event.isBase64Encoded).toBe(true);
    expect(Buffer.from(event.body, 'base64').equals(bytes)).toBe(true);
    expect(reply.body.equals(bytes)).toBe(true);
  });

  it.each([
    ['a newline in a value', { 'X-Bad': 'a\nb' }],
    ['a space in a name', { 'Bad Name': 'x' }],
  ])('answers a proxy result with %s 502 through INTEGRATION_FAILURE, and keeps serving', async (_case, headers) => {
    const { emulator } = await start({
      answer: () => ({ kind: 'ok', payload: { statusCode: 200, headers, body: '{}' } }),
    });
    const reply = await send(`${emulator.url}/pets`);
    expect(reply.status).toBe(502);
    expect(JSON.parse(reply.body.toString('utf8'))).toMatchObject({ code: 'BAD_GATEWAY', status: 502 });
    expect((await send(`${emulator.url}/pets`)).status).toBe(502);
  });

  it('answers a function error 502 through INTEGRATION_FAILURE, with the request id in the body', async () => {
    const { emulator } = await start({ answer: () => ({ kind: 'error', errorType: 'Error', errorMessage: 'boom' }) });
    const reply = await send(`${emulator.url}/pets`);
    expectBadGateway(reply);
  });

  it.each([
    ['a body that is not a string', { statusCode: 200, body: { ok: true } }],
    ['a field API Gateway does not know', { statusCode: 200, body: '', extra: 1 }],
    ['a status that is not a number', { statusCode: 'OK', body: '' }],
    ['a header value that is an object', { statusCode: 200, headers: { 'X-A': { b: 1 } }, body: '' }],
    ['no object at all', 'just text'],
  ])('answers a malformed proxy result (%s) 502', async (_, payload) => {
    const { emulator } = await start({ answer: () => ({ kind: 'ok', payload }) });
    const reply = await send(`${emulator.url}/pets`);
    expect(reply.status).toBe(502);
    expect(reply.json()).toMatchObject({ code: 'BAD_GATEWAY', requestId: reply.headers['x-amzn-requestid'] });
  });

  // AWS, "Quotas for configuring and running a REST API in API Gateway"
  // (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-execution-service-limits-table.html):
  // "Integration timeout ... 50 milliseconds - 29 seconds", the template's TimeoutInMillis; AWS,
  // "Gateway response types for API Gateway": INTEGRATION_TIMEOUT, 504.
  it('answers 504 through INTEGRATION_TIMEOUT when the function outlasts the integration timeout', async () => {
    const changed = copy();
    const listPets = logicalIdOf(changed.Resources, 'AWS::ApiGateway::Method', (p) => p.OperationName === 'listPets');
    (changed.Resources[listPets]!.Properties as any).Integration.TimeoutInMillis = 50;
    let release: () => void = () => undefined;
    const { emulator } = await start({
      template: changed,
      answer: () => new Promise((resolve) => (release = () => resolve({ kind: 'ok', payload: okResult }))),
    });
    const reply = await send(`${emulator.url}/pets`);
    release();
    expect(reply.status).toBe(504);
    expect(reply.json()).toMatchObject({
      code: 'GATEWAY_TIMEOUT',
      status: 504,
      requestId: reply.headers['x-amzn-requestid'],
    });
  });

  it("refuses to invoke a function whose policy does not let this method's API invoke it: 500 DEFAULT_5XX", async () => {
    const changed = copy();
    delete changed.Resources[
      logicalIdOf(changed.Resources, 'AWS::Lambda::Permission', (p) =>
        JSON.stringify(p.SourceArn).includes('/GET/pets/*'),
      )
    ];
    const { emulator, calls } = await start({ template: changed });
    const reply = await send(`${emulator.url}/pets/7`);
    expect(reply.status).toBe(500);
    expect(reply.json()).toEqual({
      code: 'INTERNAL',
      message: 'An unexpected error occurred in the API gateway.',
      status: 500,
      requestId: reply.headers['x-amzn-requestid'],
    });
    expect(calls).toEqual([]);
    // The other routes keep their grants.
    expect((await send(`${emulator.url}/pets`)).status).toBe(200);
  });

  // AWS, "Quotas for configuring and running a REST API in API Gateway"
  // (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-execution-service-limits-table.html):
  // "Payload size: 10 MB"; AWS, "Gateway response types for API Gateway": REQUEST_TOO_LARGE, 413;
  // "Amazon API Gateway important notes for REST APIs": "Customizing the default gateway response for
  // 413 REQUEST_TOO_LARGE isn't currently supported", so even a template that defines one gets API
  // Gateway's own body.
  it("answers a body over 10 MB 413 with API Gateway's own body, whatever the template defines, without invoking", async () => {
    // A template that tries to shape the 413 (ours no longer does), beside its DEFAULT_4XX.
    const changed = copy();
    const default4xx =
      changed.Resources[
        logicalIdOf(changed.Resources, 'AWS::ApiGateway::GatewayResponse', (p) => p.ResponseType === 'DEFAULT_4XX')
      ]!;
    changed.Resources.TooLargeResponse = structuredClone(default4xx);
    changed.Resources.TooLargeResponse.Properties!.ResponseType = 'REQUEST_TOO_LARGE';
    const { emulator, calls } = await start({ template: changed });
    const reply = await send(`${emulator.url}/pets`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: Buffer.alloc(10 * 1024 * 1024 + 1, 0x20),
    });
    expect(reply.status).toBe(413);
    expect(reply.json()).toEqual({ message: 'Request Too Long' });
    expect(calls).toEqual([]);
  });
});

describe("API Gateway's and Lambda's documented limits", () => {
  const port = (emulator: RestApiEmulator) => Number(new URL(emulator.origin).port);
  // The staging API is Regional (infra/constructs/restApi.ts).
  const limits = REQUEST_LIMITS.REGIONAL!;

  // AWS, "Quotas for configuring and running a REST API in API Gateway"
  // (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-execution-service-limits-table.html):
  // "Total combined size of all header values, including header names, values, any line
  // terminators, and whitespaces: 10240 Bytes". API Gateway's answer past it is not documented.
  it('takes headers of exactly 10240 bytes, and answers one byte more 431 HEADERS_TOO_LARGE without invoking', async () => {
    const { emulator, calls } = await start();
    // `Host: x` CRLF is 9 bytes, `X-Pad: ` and its CRLF 9 more.
    const request = (pad: number) => `GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-Pad: ${'a'.repeat(pad)}\r\n\r\n`;
    const atLimit = await rawExchange(port(emulator), request(limits.headerBytes - 18));
    expect(atLimit.status, atLimit.body).toBe(200);
    expect(calls).toHaveLength(1);
    const over = await rawExchange(port(emulator), request(limits.headerBytes - 17));
    expectEdgeAnswer(over, 431, 'HEADERS_TOO_LARGE');
    expect(calls).toHaveLength(1);
  });

  // Same page: "Length, in characters, of the URL for a Regional API: 10240".
  it('takes a URL of exactly 10240 characters, and answers one more 431 HEADERS_TOO_LARGE without invoking', async () => {
    const { emulator, calls } = await start();
    const target = (length: number) => `/v1/pets?q=${'a'.repeat(length - '/v1/pets?q='.length)}`;
    // The URL is https://x<target>: 9 characters before the target.
    const atLimit = await rawExchange(
      port(emulator),
      `GET ${target(limits.urlCharacters - 9)} HTTP/1.1\r\nHost: x\r\n\r\n`,
    );
    expect(atLimit.status, atLimit.body).toBe(200);
    expect(calls).toHaveLength(1);
    const over = await rawExchange(
      port(emulator),
      `GET ${target(limits.urlCharacters - 8)} HTTP/1.1\r\nHost: x\r\n\r\n`,
    );
    expectEdgeAnswer(over, 431, 'HEADERS_TOO_LARGE');
    expect(calls).toHaveLength(1);
  });

  // AWS, "Lambda quotas" (https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html):
  // "Invocation payload (request and response): 6 MB each for request and response (synchronous)";
  // Lambda refuses a larger event with RequestEntityTooLargeException (lambdaHost.test.ts).
  it('answers an event Lambda refuses as over its 6 MB invoke payload 413 through REQUEST_TOO_LARGE', async () => {
    const { emulator } = await start({
      answer: () => ({
        kind: 'error',
        errorType: 'RequestEntityTooLargeException',
        errorMessage: 'Request must be smaller than 6291456 bytes',
      }),
    });
    const reply = await send(`${emulator.url}/pets`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(reply.status).toBe(413);
    expect(reply.json()).toEqual({ message: 'Request Too Long' });
  });

  // AWS, "Amazon API Gateway important notes for REST APIs"
  // (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-known-issues.html#api-gateway-known-issues-rest-apis):
  // the table of headers "dropped, remapped, or otherwise modified ... sent back by your integration
  // endpoint", its Lambda response column, declared once in PROXY_RESPONSE_HEADER_RULES.
  it.each(Object.entries(PROXY_RESPONSE_HEADER_RULES))('a proxy response header %s is %s', async (name, rule) => {
    const value = 'from-the-function';
    const { emulator } = await start({
      answer: () => ({ kind: 'ok', payload: { statusCode: 200, headers: { [name]: value }, body: 'ok' } }),
    });
    const reply = await send(`${emulator.url}/pets`);
    expect(reply.status).toBe(200);
    expect(reply.text).toBe('ok');
    expect(reply.headers[`x-amzn-remapped-${name}`]).toBe(rule === 'remapped' ? value : undefined);
    expect(reply.headers[name]).not.toBe(value);
  });

  it('passes every other proxy response header as the function set it (Warn, Accept, Age, Content-Encoding...)', async () => {
    const headers = {
      Warn: '199 - "x"',
      Accept: 'text/plain',
      Age: '3',
      'Content-Encoding': 'identity',
      Pragma: 'no-cache',
      'X-Custom': 'c',
    };
    const { emulator } = await start({
      answer: () => ({ kind: 'ok', payload: { statusCode: 200, headers, body: 'ok' } }),
    });
    const reply = await send(`${emulator.url}/pets`);
    for (const [name, value] of Object.entries(headers)) {
      expect(reply.headers[name.toLowerCase()], name).toBe(value);
      expect(reply.headers[`x-amzn-remapped-${name.toLowerCase()}`], name).toBeUndefined();
    }
  });
});

// A function that outlives its own `Timeout` ends with Lambda's error ("Task timed out after 1.00
// seconds"), not a proxy result: AWS, "Set up Lambda proxy integrations in API Gateway"
// (https://docs.aws.amazon.com/apigateway/latest/developerguide/set-up-lambda-proxy-integrations.html#api-gateway-simple-proxy-for-lambda-output-format):
// "If the function output is of a different format, API Gateway returns a 502 Bad Gateway error
// response"; AWS, "Gateway response types for API Gateway"
// (https://docs.aws.amazon.com/apigateway/latest/developerguide/supported-gateway-response-types.html):
// INTEGRATION_FAILURE, "the gateway response for an integration failed error".
describe("a function's own timeout, shorter than the integration's", () => {
  it('answers 502 through INTEGRATION_FAILURE when the function outlasts its Timeout from the template', async () => {
    const assetDir = mkdtempSync(join(tmpdir(), 'rest-api-timeout-'));
    // The handler outlasts its timeout (its own work, in its sandbox), which the test waits for.
    writeFileSync(
      join(assetDir, 'index.mjs'),
      'export const handler = async () => { await new Promise((r) => setTimeout(r, 10_000)); return { statusCode: 200, body: "late" }; };',
    );
    const changed = copy();
    const listPets = logicalIdOf(changed.Resources, 'AWS::Lambda::Function', (p) =>
      String(p.Description).startsWith('GET /v1/pets:'),
    );
    changed.Resources[listPets]!.Properties!.Timeout = 1;
    const host = new LambdaFunctionHost(
      fixtureFunction('timeout-fixture', assetDir, {
        timeoutSeconds: Number(changed.Resources[listPets]!.Properties!.Timeout),
      }),
    );
    try {
      const { emulator } = await start({ template: changed, answer: (event) => host.invoke(event) });
      const started = Date.now();
      const reply = await send(`${emulator.url}/pets`);
      expectBadGateway(reply);
      // The function's 1 s, not the integration's 29 s nor the handler's 10 s.
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await host.close();
      rmSync(assetDir, { recursive: true, force: true });
    }
  });
});

// Past reserved concurrency Lambda refuses the invocation (429 TooManyRequestsException) and nothing
// runs: AWS, "Handling Lambda errors with an API Gateway API"
// (https://docs.aws.amazon.com/lambda/latest/dg/services-apigateway-errors.html): "If the Lambda API
// rejects the invocation request, API Gateway returns a 500 error code", body {"message": "Internal
// server error"}; the gateway response type is INTEGRATION_FAILURE, which this template shapes.
describe('a function throttled past its ReservedConcurrentExecutions', () => {
  const slowMs = 1_500;

  /** Two concurrent GET /pets to a listPets of reserved concurrency 1 (a real sandbox), timed. */
  async function twoConcurrentRequests(changed: CfnTemplate) {
    const assetDir = mkdtempSync(join(tmpdir(), 'rest-api-throttle-'));
    // The handler takes slowMs (its own work, in its sandbox) so that the second request finds it busy.
    writeFileSync(
      join(assetDir, 'index.mjs'),
      `export const handler = async () => { await new Promise((r) => setTimeout(r, ${slowMs})); return { statusCode: 200, body: "ran" }; };`,
    );
    const listPets = logicalIdOf(changed.Resources, 'AWS::Lambda::Function', (p) =>
      String(p.Description).startsWith('GET /v1/pets:'),
    );
    changed.Resources[listPets]!.Properties!.ReservedConcurrentExecutions = 1;
    const host = new LambdaFunctionHost(
      fixtureFunction('throttle-fixture', assetDir, {
        reservedConcurrency: Number(changed.Resources[listPets]!.Properties!.ReservedConcurrentExecutions),
      }),
    );
    try {
      const { emulator } = await start({ template: changed, answer: (event) => host.invoke(event) });
      const started = Date.now();
      const timedSend = () => send(`${emulator.url}/pets`).then((reply) => ({ reply, afterMs: Date.now() - started }));
      const replies = await Promise.all([timedSend(), timedSend()]);
      const ran = replies.filter(({ reply }) => reply.status === 200);
      const refused = replies.filter(({ reply }) => reply.status !== 200);
      expect(ran.map(({ reply }) => reply.text)).toEqual(['ran']);
      expect(refused).toHaveLength(1);
      // Refused at once: it did not wait for the slow one's sandbox.
      expect(refused[0]!.afterMs).toBeLessThan(slowMs / 2);
      return refused[0]!.reply;
    } finally {
      await host.close();
      rmSync(assetDir, { recursive: true, force: true });
    }
  }

  it('answers API Gateway\'s own 500 {"message":"Internal server error"} when the template shapes no gateway response', async () => {
    const changed = copy();
    for (const [id, resource] of Object.entries(changed.Resources))
      if (resource.Type === 'AWS::ApiGateway::GatewayResponse') delete changed.Resources[id];
    const reply = await twoConcurrentRequests(changed);
    expect(reply.status).toBe(500);
    expect(reply.json()).toEqual({ message: 'Internal server error' });
    expect(reply.headers['x-amzn-errortype']).toBe('InternalServerErrorException');
    expectGatewayHeaders(reply);
  });

  it("answers through the template's INTEGRATION_FAILURE response (502 BAD_GATEWAY) as deployed", async () => {
    expectBadGateway(await twoConcurrentRequests(copy()));
  });
});

describe('stage throttling', () => {
  it("answers over the stage's rate and burst 429 through THROTTLED, with the template's Retry-After", async () => {
    const changed = copy();
    const stage = logicalIdOf(changed.Resources, 'AWS::ApiGateway::Stage', () => true);
    const [settings] = (changed.Resources[stage]!.Properties as any).MethodSettings;
    Object.assign(settings, { ThrottlingRateLimit: 1, ThrottlingBurstLimit: 2 });
    const { emulator, calls } = await start({ template: changed });
    const replies = await Promise.all(Array.from({ length: 6 }, () => send(`${emulator.url}/pets`)));
    const throttled = replies.filter((reply) => reply.status === 429);
    // Burst 2, refilled at 1 per second: at most 2 pass plus one per second the burst took.
    expect(throttled.length).toBeGreaterThanOrEqual(3);
    expect(calls.length).toBe(6 - throttled.length);
    for (const reply of throttled) {
      expect(reply.headers['retry-after']).toBe('1');
      expect(reply.json()).toMatchObject({ code: 'TOO_MANY_REQUESTS', status: 429 });
    }
  });
});

describe('the front door: any target, any method, half-closed connections', () => {
  const notFound = { code: 'NOT_FOUND', message: 'No resource exists at this path.', status: 404 };

  // Each is what API Gateway answers for a method and path without an API method: the
  // MISSING_AUTHENTICATION_TOKEN gateway response, which the template makes the 404 Error.
  it.each([
    ['GET //', 'GET // HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['GET //x/v1/pets', 'GET //x/v1/pets HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['GET http://[', 'GET http://[ HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['OPTIONS *', 'OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n'],
    [
      'POST //[ with a body',
      'POST //[ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
    ],
    ['CONNECT example.com:443', 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'],
    ['CONNECT /v1/pets', 'CONNECT /v1/pets HTTP/1.1\r\nHost: x\r\n\r\n'],
    [
      'Upgrade: websocket',
      'GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
    ],
  ])('answers %s with the gateway 404, invoking nothing, and serves on', async (_, request) => {
    const { emulator, calls } = await start();
    const answer = await rawExchange(Number(new URL(emulator.origin).port), request);
    expect(answer.status, answer.body).toBe(404);
    expect(answer.headers['content-type']).toBe('application/json');
    expect(answer.headers['x-amzn-errortype']).toBe('MissingAuthenticationTokenException');
    expect(answer.headers['x-amzn-requestid']).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(answer.body)).toEqual(notFound);
    expect(calls).toEqual([]);
    const after = await send(`${emulator.url}/pets`);
    expect(after.status).toBe(200);
    expect(calls).toHaveLength(1);
  });

  it('answers a client that half-closes after its POST, then closes; the function is invoked once', async () => {
    // The function answers once the server has the client's FIN, as one in a child process may.
    const finReceived: Promise<unknown>[] = [];
    const emit = NetServer.prototype.emit as (this: NetServer, event: string | symbol, ...args: unknown[]) => boolean;
    vi.spyOn(NetServer.prototype, 'emit').mockImplementation(function (
      this: NetServer,
      event: string | symbol,
      ...args: unknown[]
    ) {
      if (event === 'connection') finReceived.push(once(args[0] as Socket, 'end'));
      return emit.call(this, event, ...args);
    } as NetServer['emit']);
    onTestFinished(() => void vi.restoreAllMocks());
    const { emulator, calls } = await start({
      answer: async () => {
        await Promise.all(finReceived);
        return {
          kind: 'ok',
          payload: { statusCode: 201, headers: { 'Content-Type': 'application/json' }, body: '{"id":1}' },
        };
      },
    });
    const body = JSON.stringify({ name: 'Rex', categoryId: 1 });
    const answer = await rawExchange(
      Number(new URL(emulator.origin).port),
      `POST /v1/pets HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      { halfClose: true },
    );
    expect(answer.status, answer.body).toBe(201);
    expect(answer.body).toBe('{"id":1}');
    expect(answer.headers['x-amzn-requestid']).toMatch(/^[0-9a-f-]{36}$/);
    expect(answer.closedByServer).toBe(true);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.event.body).toBe(body);
  });
});

describe('doubled and trailing slashes (tools/local-kit/src/requestTarget.ts routingSegments, shared with the local API)', () => {
  it.each([
    ['/v1/pets/', '/pets/', '/pets'],
    ['/v1//pets', '//pets', '/pets'],
    ['/v1/pets//', '/pets//', '/pets'],
    ['/v1/pets/7/', '/pets/7/', '/pets/{petId}'],
    ['/v1//pets//7', '//pets//7', '/pets/{petId}'],
  ])('routes %s to its method, and hands the function the path as sent', async (path, below, resource) => {
    const { emulator, calls } = await start();
    const reply = await send(`${emulator.origin}${path}`);
    expect(reply.status, reply.text).toBe(200);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.event).toMatchObject({ resource, path: below });
    if (resource === '/pets/{petId}') expect(calls[0]?.event.pathParameters).toEqual({ petId: '7' });
  });

  it('answers another method on /v1/pets/ with the 405 mock', async () => {
    const { emulator, calls } = await start();
    const reply = await send(`${emulator.origin}/v1/pets/`, { method: 'DELETE' });
    expect(reply.status).toBe(405);
    expect(reply.json().message).toBe('The method DELETE is not allowed on /v1/pets; allowed: GET, POST.');
    expect(calls).toEqual([]);
  });
});

describe('edges: what never reaches a method is answered as the local API answers it (tools/local-kit/src/httpEdges.ts)', () => {
  it.each(PARSER_EDGE_REQUESTS)(
    'answers %s with a JSON Error and an X-Request-Id, invoking nothing, and closes',
    async (_, request, status, code) => {
      const { emulator, calls } = await start();
      const answer = await rawExchange(Number(new URL(emulator.origin).port), request);
      expectEdgeAnswer(answer, status, code);
      expect(calls).toEqual([]);
    },
  );

  it('answers a client that sends its headers too slowly 408 REQUEST_TIMEOUT, not an empty 408', async () => {
    const { emulator } = await start({ headersTimeoutMs: 300 });
    const answer = await rawExchange(Number(new URL(emulator.origin).port), 'GET /v1/pets HTTP/1.1\r\nHost: x\r\n');
    expectEdgeAnswer(answer, 408, 'REQUEST_TIMEOUT');
  });
});

function expectEdgeAnswer(answer: Awaited<ReturnType<typeof rawExchange>>, status: number, code: string): void {
  expect(answer.status, answer.body).toBe(status);
  expect(answer.headers['content-type']).toBe('application/json');
  expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  expect(answer.headers.connection).toBe('close');
  expect(JSON.parse(answer.body)).toEqual({ code, message: expect.any(String), status });
}

describe('startRestApiEmulator', () => {
  it('rejects with one line naming the port when it is taken', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', () => resolve()));
    const port = (blocker.address() as { port: number }).port;
    try {
      const started = startRestApiEmulator({
        template,
        resolver: new TemplateResolver({ stackName: 'PetStore-staging', template }),
        env: OFFLINE,
        port,
        invoke: async () => ({ kind: 'ok', payload: okResult }),
      });
      await expect(started).rejects.toThrow(new RegExp(`^Port ${port} on 127\\.0\\.0\\.1 is already in use[^\\n]*$`));
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  it('gives its base URL under the stage name from the template', async () => {
    const { emulator } = await start();
    expect(emulator.url).toBe(`${emulator.origin}/v1`);
    expect(emulator.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });
});

describe('the key authorizer and the usage plan (a stand-in authorizer)', () => {
  const KEY = 'a'.repeat(64);
  const allow = (event: any): InvokeOutcome => ({
    kind: 'ok',
    payload: {
      principalId: 'key-1',
      policyDocument: {
        Version: '2012-10-17',
        Statement: [
          { Action: 'execute-api:Invoke', Effect: 'Allow', Resource: event.methodArn.replace(/\/[A-Z]+\/.*$/, '/*') },
        ],
      },
      context: { keyId: 'key-1' },
      usageIdentifierKey: KEY,
    },
  });
  const isAuthorizer = (event: any) => event.type === 'REQUEST' && typeof event.methodArn === 'string';
  const keyed = (authorizer: (event: any) => InvokeOutcome, template = keyedTemplate) =>
    start({
      template,
      answer: (event) => (isAuthorizer(event) ? authorizer(event) : { kind: 'ok', payload: okResult }),
    });
  const auth = { Authorization: 'Bearer k1' };

  it('runs the authorizer with the REQUEST event, caches its answer per Authorization, and hands principalId and context to the integration', async () => {
    const { emulator, calls } = await keyed(allow);
    for (let i = 0; i < 2; i++) expect((await send(`${emulator.url}/pets/7`, { headers: auth })).status).toBe(200);
    const [authorizerCall, ...proxied] = calls;
    expect(isAuthorizer(authorizerCall!.event)).toBe(true);
    expect(authorizerCall!.event).toMatchObject({
      resource: '/pets/{petId}',
      path: '/pets/7',
      httpMethod: 'GET',
      headers: { Authorization: 'Bearer k1' },
    });
    expect(authorizerCall!.event.methodArn).toMatch(/^arn:aws:execute-api:[^:]+:\d+:\w+\/v1\/GET\/pets\/7$/);
    expect(proxied).toHaveLength(2);
    expect(proxied.every((call) => !isAuthorizer(call.event))).toBe(true);
    expect(proxied[0]!.event.requestContext.authorizer).toEqual({ principalId: 'key-1', keyId: 'key-1' });
  });

  it('answers without running anything when the Authorization header is missing: 401 with the challenge', async () => {
    const { emulator, calls } = await keyed(allow);
    const reply = await send(`${emulator.url}/pets`);
    expect(reply.status).toBe(401);
    expect(reply.json()).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
    expect(reply.headers['www-authenticate']).toBe('Bearer realm="petstore"');
    expect(calls).toEqual([]);
  });

  it.each([
    ['"Unauthorized"', { kind: 'error', errorType: 'Error', errorMessage: 'Unauthorized' }, 401, 'UNAUTHORIZED'],
    [
      'another error',
      { kind: 'error', errorType: 'Error', errorMessage: 'table unreachable' },
      503,
      'SERVICE_UNAVAILABLE',
    ],
    [
      'a Deny',
      {
        kind: 'ok',
        payload: {
          principalId: 'p',
          policyDocument: { Statement: [{ Action: 'execute-api:Invoke', Effect: 'Deny', Resource: '*' }] },
        },
      },
      403,
      'FORBIDDEN',
    ],
    ['an answer without a policy', { kind: 'ok', payload: { principalId: 'p' } }, 500, 'INTERNAL'],
  ] as const)(
    'answers an authorizer that returns %s through its gateway response, in the Error shape',
    async (_, outcome, status, code) => {
      const { emulator, calls } = await keyed(() => outcome as InvokeOutcome);
      const reply = await send(`${emulator.url}/pets`, { headers: auth });
      expect(reply.status).toBe(status);
      expect(reply.json()).toMatchObject({ code, status });
      expect(calls.filter((call) => !isAuthorizer(call.event))).toEqual([]);
    },
  );

  it('refuses 403 an Allow without a usageIdentifierKey, since every route method needs an API key', async () => {
    const { emulator } = await keyed((event) => {
      const outcome = allow(event) as { kind: 'ok'; payload: Record<string, unknown> };
      delete outcome.payload.usageIdentifierKey;
      return outcome;
    });
    const reply = await send(`${emulator.url}/pets`, { headers: auth });
    expect(reply.status).toBe(403);
    expect(reply.json()).toMatchObject({ code: 'FORBIDDEN', status: 403 });
  });

  it("answers 500 when the authorizer's function does not let API Gateway invoke it", async () => {
    const unpermitted = structuredClone(keyedTemplate);
    for (const [id, resource] of Object.entries(unpermitted.Resources)) {
      if (resource.Type === 'AWS::Lambda::Permission' && JSON.stringify(resource.Properties).includes('/authorizers/'))
        delete unpermitted.Resources[id];
    }
    const { emulator, calls } = await keyed(allow, unpermitted);
    const reply = await send(`${emulator.url}/pets`, { headers: auth });
    expect(reply.status).toBe(500);
    expect(calls).toEqual([]);
  });

  it("counts each key's daily quota from the template's usage plan: 429 with Retry-After once it is used up", async () => {
    const small = structuredClone(keyedTemplate);
    const plan = Object.values(small.Resources).find((r) => r.Type === 'AWS::ApiGateway::UsagePlan')!;
    plan.Properties!.Quota = { Limit: 2, Period: 'DAY' };
    const { emulator } = await keyed(allow, small);
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await send(`${emulator.url}/pets`, { headers: auth })).status);
    expect(statuses).toEqual([200, 200, 429]);
    const reply = await send(`${emulator.url}/pets`, { headers: auth });
    expect(reply.json()).toMatchObject({ code: 'TOO_MANY_REQUESTS', status: 429 });
    expect(reply.headers['retry-after']).toBe('3600');
  });
});

describe('VTL context', () => {
  const input = {
    body: '{"name":"Rex","tags":["a","b"],"nested":{"n":1}}',
    params: { path: { petId: '7' }, querystring: { limit: '3' }, header: { 'X-Thing': 'h' } },
  };
  const render = (template: string) =>
    renderTemplate(template, {
      context: { requestId: 'r-1', error: { messageString: '"m"' } },
      input,
      stageVariables: { color: 'blue' },
    });

  it('gives $input: params by name and all of them, JSONPath as JSON text and as objects, the raw body', () => {
    expect(
      render("$input.params('petId') $input.params('limit') $input.params('x-thing') [$input.params('none')]"),
    ).toBe('7 3 h []');
    expect(render('#foreach($name in $input.params().path.keySet())$name=$input.params().path.get($name)#end')).toBe(
      'petId=7',
    );
    expect(render("$input.json('$.name') $input.json('$.tags') $input.json('$.nested')")).toBe(
      '"Rex" ["a","b"] {"n":1}',
    );
    expect(render("$input.path('$').tags.size() $input.path('$.tags[1]') $input.path('$.nested').n")).toBe('2 b 1');
    expect(render('$input.body')).toBe(input.body);
  });

  it('gives $util as API Gateway documents it', () => {
    expect(render(`$util.escapeJavaScript("a'b/c")`)).toBe("a\\'b\\/c");
    expect(escapeJavaScript('q"\n\u00e9')).toBe('q\\"\\n\\u00E9');
    expect(render("$util.urlEncode('a b&c~*')")).toBe('a+b%26c%7E*');
    expect(render("$util.urlDecode('a+b%26c')")).toBe('a b&c');
    expect(render("$util.base64Encode('Rex é')")).toBe(Buffer.from('Rex é').toString('base64'));
    expect(render(`$util.base64Decode('${Buffer.from('Rex é').toString('base64')}')`)).toBe('Rex é');
    expect(render(`#set($o = $util.parseJson('{"a":[1,2]}'))$o.a[1]`)).toBe('2');
  });

  it('gives $context and $stageVariables, and renders what does not exist as nothing', () => {
    expect(
      render('$context.requestId $context.error.messageString $stageVariables.color [$context.nothing] [$nothing]'),
    ).toBe('r-1 "m" blue [] []');
  });
});
