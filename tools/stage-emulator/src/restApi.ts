/**
 * One API Gateway REST API served on loopback exactly as its CloudFormation template defines it:
 * the stage as base path, the resource tree and methods, AWS_PROXY integrations (the payload 1.0
 * event, the Lambda resource policy, the proxy result), MOCK integrations (VTL request and response
 * templates), the gateway responses API Gateway answers by itself, and the stage's throttling.
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { groupPairs, headersAndQuery, lastValues, localIdentity, pairs } from '../../../local/proxyEvent.ts';
import { ApiError } from '../../../lib/domain/errors.ts';
import { answerEdges, edgeServerOptions, missingHost, sendError } from '../../../local/httpEdges.ts';
import { readRequestBody } from '../../../local/requestBody.ts';
import { routingSegments, targetUrl } from '../../../local/requestTarget.ts';
import type { CfnTemplate } from './cloudAssembly.ts';
import type { DeployedEnvironment } from './intrinsics.ts';
import {
  Authorizers,
  TokenBucket,
  arnLike,
  UsagePlanLimits,
  isRefusal,
  readAuthorizerTtl,
  type Authorization,
  type AuthorizerDefinition,
  type Refusal,
  type UsagePlanDefinition,
} from './authorizers.ts';
import { THROTTLED_OUTCOME, type InvokeOutcome } from './lambdaHost.ts';
import { renderTemplate, valueAt, type TemplateInput } from './velocity.ts';

export interface RestApiEmulatorOptions {
  template: CfnTemplate;
  resolver: { resolve(value: unknown): unknown; ref(logicalId: string): string; getAtt(logicalId: string, attribute: string): string };
  env: DeployedEnvironment;
  /** Invokes the integration target; `functionArn` is the resolved ARN from the integration Uri (the `live` alias). */
  invoke(functionArn: string, event: unknown): Promise<InvokeOutcome>;
  port?: number;
  host?: string;
  /** Where API Gateway's execution log lines (ERROR level) go; default stderr. */
  log?: (line: string) => void;
  /** How long a client may take over its request line and headers before a 408 (default HEADERS_TIMEOUT_MS). */
  headersTimeoutMs?: number;
}

export interface RestApiEmulator {
  /** http://127.0.0.1:PORT/<stage> */
  url: string;
  origin: string;
  close(): Promise<void>;
}

/** A template the emulator cannot serve; the message is one line. */
export class RestApiTemplateError extends Error {}

/** The port is taken; the message is one line naming it. */
export class RestApiPortInUseError extends Error {}

/**
 * An AWS_PROXY integration's timeout when the template sets no `TimeoutInMillis`: "Integration
 * timeout for Regional APIs: 50 milliseconds - 29 seconds for all integration types, including
 * Lambda, Lambda proxy ..." (AWS, "Quotas for configuring and running a REST API in API Gateway",
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-execution-service-limits-table.html).
 */
const DEFAULT_INTEGRATION_TIMEOUT_MS = 29_000;

/**
 * What API Gateway takes of a request's URL and headers, by the API's endpoint type (AWS, "Quotas
 * for configuring and running a REST API in API Gateway",
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-execution-service-limits-table.html):
 * "Length, in characters, of the URL for a Regional API: 10240" (edge-optimized and private: 8192);
 * "Total combined size of all header values, including header names, values, any line terminators,
 * and whitespaces: 10240 Bytes" (private API: 8000).
 */
export const REQUEST_LIMITS: Readonly<Record<string, { urlCharacters: number; headerBytes: number }>> = {
  REGIONAL: { urlCharacters: 10_240, headerBytes: 10_240 },
  EDGE: { urlCharacters: 8_192, headerBytes: 10_240 },
  PRIVATE: { urlCharacters: 8_192, headerBytes: 8_000 },
};
/** The account-level limits API Gateway applies when nothing narrower is set. */
const ACCOUNT_THROTTLING = { rateLimit: 10_000, burstLimit: 5_000 };

export async function startRestApiEmulator(options: RestApiEmulatorOptions): Promise<RestApiEmulator> {
  const api = withAccessControl(readRestApi(options.template, options.resolver, options.env), options);
  const throttles = new Throttles(api.methodSettings);
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  let domainName = '';
  // The whole answer runs in an async function: nothing a request brings can throw out of the
  // listener and end the runner. A failure while answering is API Gateway's own 500 (DEFAULT_5XX);
  // one while sending just ends the connection.
  const serveRequest = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const refused = missingHost(request) ?? overLimits(request, requestLimits(api));
    if (refused) {
      request.resume();
      return sendError(response, refused);
    }
    const exchange = newExchange(request, api, domainName);
    const result = await answer(request, exchange, api, throttles, options, log).catch((error: unknown) => {
      log(`(${exchange.requestId}) Execution failed: ${String(error)}`);
      return gatewayResponse('DEFAULT_5XX', 'Internal server error', exchange, api);
    });
    send(response, exchange, result);
  };
  // What never reaches a method (what Node's parser refuses, an unknown Expect, no Host, headers
  // too slow) is answered as the local API answers it, a JSON Error (local/httpEdges.ts): API
  // Gateway's edge answers for these are not documented (docs/api.md, "Requests Node refuses").
  // Node's own header limit (16 KB by default) is raised above the API's, so that a request over
  // the API's limits reaches overLimits rather than Node's parser.
  const limits = requestLimits(api);
  const maxHeaderSize = limits.urlCharacters + limits.headerBytes + 1024;
  const server = createServer({ ...edgeServerOptions(options.headersTimeoutMs), maxHeaderSize }, (request, response) => {
    serveRequest(request, response).catch(() => response.destroy());
  });
  answerEdges(server);
  // A client that half-closes after its request (FIN) still gets its answer, then the connection
  // ends; Node's default drops the request being answered on FIN. (Node reads the property in
  // _http_server.js socketOnEnd; @types/node does not declare it.)
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  server.on('connect', (request: IncomingMessage, socket: Duplex) => answerConnect(request, socket, api, domainName));
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 0;
  await listen(server, port, host);
  const address = server.address() as AddressInfo;
  domainName = `${address.address}:${address.port}`;
  const origin = `http://${domainName}`;
  return {
    url: `${origin}/${api.stageName}`,
    origin,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function requestLimits(api: RestApi): (typeof REQUEST_LIMITS)[string] {
  return REQUEST_LIMITS[api.endpointType] ?? (REQUEST_LIMITS.EDGE as (typeof REQUEST_LIMITS)[string]);
}

/**
 * A request over the API's URL or header quota (REQUEST_LIMITS). How API Gateway answers one is not
 * documented, and no gateway response type covers it (AWS, "Gateway response types for API
 * Gateway", https://docs.aws.amazon.com/apigateway/latest/developerguide/supported-gateway-response-types.html):
 * the template cannot shape it. It gets what a request line or headers over Node's own limit get
 * here, the 431 HEADERS_TOO_LARGE Error (local/httpEdges.ts), and the connection closes.
 * The URL is counted as the client's `https://host/path?query`; each header as `name: value` and
 * its CRLF, in bytes as sent (the blank line that ends the headers is no header).
 */
function overLimits(request: IncomingMessage, limits: (typeof REQUEST_LIMITS)[string]): ApiError | undefined {
  const url = `https://${request.headers.host ?? ''}${request.url ?? ''}`;
  if (url.length > limits.urlCharacters) {
    return new ApiError('HEADERS_TOO_LARGE', `The request URL is longer than the ${limits.urlCharacters} characters API Gateway takes.`);
  }
  const headerBytes = pairs(request.rawHeaders).reduce(
    (total, [name, value]) => total + Buffer.byteLength(name, 'latin1') + 2 + Buffer.byteLength(value, 'latin1') + 2,
    0,
  );
  if (headerBytes > limits.headerBytes) {
    return new ApiError('HEADERS_TOO_LARGE', `The request headers are larger than the ${limits.headerBytes} bytes API Gateway takes.`);
  }
  return undefined;
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'EADDRINUSE' ? new RestApiPortInUseError(`Port ${port} on ${host} is already in use; choose another port.`) : error),
    );
    server.listen(port, host, () => resolve());
  });
}

// ---------------------------------------------------------------------------------------------
// The API as the template defines it

interface ApiResource {
  id: string;
  /** `/`, `/pets`, `/pets/{petId}`, `/{proxy+}` */
  path: string;
  kind: 'root' | 'literal' | 'param' | 'greedy';
  /** The literal path part, or the parameter's name. */
  name: string;
  children: ApiResource[];
  methods: Map<string, ApiMethod>;
}

interface ApiMethod {
  logicalId: string;
  httpMethod: string;
  resource: ApiResource;
  integration: Integration;
  /** The method's CUSTOM authorizer (its id), if any, and whether it needs an API key (a usage plan's). */
  authorizerId?: string | undefined;
  apiKeyRequired: boolean;
}

type Integration =
  | { type: 'AWS_PROXY'; functionArn: string; timeoutMs: number }
  | {
      type: 'MOCK';
      requestTemplates: Record<string, string>;
      passthroughBehavior: string;
      responses: IntegrationResponse[];
    };

interface IntegrationResponse {
  statusCode: string;
  selectionPattern?: string;
  responseParameters: Record<string, string>;
  responseTemplates: Record<string, string>;
}

interface GatewayResponseDefinition {
  statusCode?: string;
  responseParameters: Record<string, string>;
  responseTemplates: Record<string, string>;
}

interface LambdaPermission {
  logicalId: string;
  action: string;
  principal: string;
  functionName: string;
  sourceArn?: string;
  sourceAccount?: string;
}

interface MethodSetting { resourcePath: string; httpMethod: string; rateLimit?: number; burstLimit?: number }

interface RestApi {
  apiId: string;
  stageName: string;
  stageVariables: Record<string, string> | null;
  root: ApiResource;
  binaryMediaTypes: string[];
  /** REGIONAL, EDGE or PRIVATE: the API's EndpointConfiguration (API Gateway's default: EDGE). */
  endpointType: string;
  gatewayResponses: Map<string, GatewayResponseDefinition>;
  permissions: LambdaPermission[];
  methodSettings: MethodSetting[];
  env: DeployedEnvironment;
  authorizers: Map<string, AuthorizerDefinition>;
  /** HEADER (`x-api-key`) or AUTHORIZER (the authorizer's usageIdentifierKey). */
  apiKeySource: string;
  /** The usage plan that covers this API's stage, if any. */
  usagePlan: UsagePlanDefinition | undefined;
  /** Set by `withAccessControl`. */
  access?: { authorizers: Authorizers; limits: UsagePlanLimits };
}

function readRestApi(template: CfnTemplate, resolver: RestApiEmulatorOptions['resolver'], env: DeployedEnvironment): RestApi {
  const ofType = (type: string) => Object.entries(template.Resources).filter(([, resource]) => resource.Type === type);
  const apis = ofType('AWS::ApiGateway::RestApi');
  if (apis.length !== 1) {
    throw new RestApiTemplateError(`The template has ${apis.length} AWS::ApiGateway::RestApi resources; the emulator serves exactly one.`);
  }
  const [apiLogicalId, apiResource] = apis[0] as [string, CfnTemplate['Resources'][string]];
  const apiId = resolver.ref(apiLogicalId);
  const field = (resource: { Properties?: Record<string, unknown> }, name: string): unknown => resolver.resolve(resource.Properties?.[name]);
  const ofApi = (type: string) => ofType(type).filter(([, resource]) => field(resource, 'RestApiId') === apiId);

  const stages = ofApi('AWS::ApiGateway::Stage');
  if (stages.length !== 1) throw new RestApiTemplateError(`The REST API ${apiLogicalId} has ${stages.length} stages; the emulator serves exactly one.`);
  const [, stage] = stages[0] as [string, CfnTemplate['Resources'][string]];

  const root: ApiResource = { id: resolver.getAtt(apiLogicalId, 'RootResourceId'), path: '/', kind: 'root', name: '', children: [], methods: new Map() };
  const resources = readResources(ofApi('AWS::ApiGateway::Resource'), root, resolver, field);
  const api: RestApi = {
    apiId,
    stageName: String(field(stage, 'StageName')),
    stageVariables: stringRecordOrNull(field(stage, 'Variables')),
    root,
    endpointType: String(((field(apiResource, 'EndpointConfiguration') as { Types?: string[] } | undefined)?.Types ?? ['EDGE'])[0]),
    binaryMediaTypes: ((field(apiResource, 'BinaryMediaTypes') as string[] | undefined) ?? []).map((type) => type.replace('~1', '/')),
    gatewayResponses: new Map(
      ofApi('AWS::ApiGateway::GatewayResponse').map(([, resource]) => [
        String(field(resource, 'ResponseType')),
        {
          statusCode: optionalString(field(resource, 'StatusCode')),
          responseParameters: stringRecord(field(resource, 'ResponseParameters')),
          responseTemplates: stringRecord(field(resource, 'ResponseTemplates')),
        },
      ]),
    ),
    permissions: ofType('AWS::Lambda::Permission').map(([logicalId, resource]) => ({
      logicalId,
      action: String(field(resource, 'Action')),
      principal: String(field(resource, 'Principal')),
      functionName: String(field(resource, 'FunctionName')),
      sourceArn: optionalString(field(resource, 'SourceArn')),
      sourceAccount: optionalString(field(resource, 'SourceAccount')),
    })),
    methodSettings: ((field(stage, 'MethodSettings') as Record<string, unknown>[] | undefined) ?? []).map((setting) => ({
      resourcePath: String(setting.ResourcePath ?? '/*'),
      httpMethod: String(setting.HttpMethod ?? '*'),
      rateLimit: optionalNumber(setting.ThrottlingRateLimit),
      burstLimit: optionalNumber(setting.ThrottlingBurstLimit),
    })),
    env,
    authorizers: readAuthorizers(ofApi('AWS::ApiGateway::Authorizer'), resolver, field),
    apiKeySource: String(field(apiResource, 'ApiKeySourceType') ?? 'HEADER'),
    usagePlan: readUsagePlan(ofType('AWS::ApiGateway::UsagePlan'), apiId, String(field(stage, 'StageName')), resolver, field),
  };
  for (const [logicalId, method] of ofApi('AWS::ApiGateway::Method')) {
    const resource = resources.get(String(field(method, 'ResourceId')));
    if (!resource) throw new RestApiTemplateError(`The method ${logicalId} names a resource that is not in the REST API.`);
    const httpMethod = String(field(method, 'HttpMethod')).toUpperCase();
    const authorizationType = String(field(method, 'AuthorizationType') ?? 'NONE');
    if (!['NONE', 'CUSTOM'].includes(authorizationType)) {
      throw new RestApiTemplateError(`The method ${logicalId} uses ${authorizationType} authorization, which the emulator does not serve.`);
    }
    const authorizerId = authorizationType === 'CUSTOM' ? String(field(method, 'AuthorizerId')) : undefined;
    if (authorizerId !== undefined && !api.authorizers.has(authorizerId)) {
      throw new RestApiTemplateError(`The method ${logicalId} names an authorizer that is not in the REST API.`);
    }
    resource.methods.set(httpMethod, {
      logicalId,
      httpMethod,
      resource,
      integration: readIntegration(logicalId, field(method, 'Integration')),
      authorizerId,
      apiKeyRequired: field(method, 'ApiKeyRequired') === true || field(method, 'ApiKeyRequired') === 'true',
    });
  }
  return api;
}

function readResources(
  entries: [string, CfnTemplate['Resources'][string]][],
  root: ApiResource,
  resolver: RestApiEmulatorOptions['resolver'],
  field: (resource: { Properties?: Record<string, unknown> }, name: string) => unknown,
): Map<string, ApiResource> {
  const byId = new Map<string, ApiResource>([[root.id, root]]);
  const pending = entries.map(([logicalId, resource]) => ({
    id: resolver.ref(logicalId),
    logicalId,
    parentId: String(field(resource, 'ParentId')),
    pathPart: String(field(resource, 'PathPart')),
  }));
  // Parents may come after their children in the template: attach in rounds.
  while (pending.length > 0) {
    const ready = pending.findIndex((entry) => byId.has(entry.parentId));
    if (ready < 0) throw new RestApiTemplateError(`The resource ${pending[0]?.logicalId} hangs from no resource of the REST API.`);
    const [{ id, parentId, pathPart }] = pending.splice(ready, 1) as [(typeof pending)[number]];
    const parent = byId.get(parentId) as ApiResource;
    const param = /^\{(\w+)(\+?)\}$/.exec(pathPart);
    const node: ApiResource = {
      id,
      path: `${parent.path === '/' ? '' : parent.path}/${pathPart}`,
      kind: param ? (param[2] ? 'greedy' : 'param') : 'literal',
      name: param ? (param[1] as string) : pathPart,
      children: [],
      methods: new Map(),
    };
    parent.children.push(node);
    byId.set(id, node);
  }
  return byId;
}

type Field = (resource: { Properties?: Record<string, unknown> }, name: string) => unknown;

function readAuthorizers(
  entries: [string, CfnTemplate['Resources'][string]][],
  resolver: RestApiEmulatorOptions['resolver'],
  field: Field,
): Map<string, AuthorizerDefinition> {
  const authorizers = new Map<string, AuthorizerDefinition>();
  for (const [logicalId, resource] of entries) {
    const uri = String(field(resource, 'AuthorizerUri'));
    const functionArn = LAMBDA_INVOCATION_URI.exec(uri)?.[1];
    if (!functionArn) throw new RestApiTemplateError(`The authorizer ${logicalId} calls ${uri}, which is not a Lambda function.`);
    const id = resolver.ref(logicalId);
    authorizers.set(id, {
      id,
      logicalId,
      type: String(field(resource, 'Type')),
      functionArn,
      identitySources: String(field(resource, 'IdentitySource') ?? '').split(',').map((source) => source.trim()).filter(Boolean),
      ttlSeconds: readAuthorizerTtl(field(resource, 'AuthorizerResultTtlInSeconds')),
    });
  }
  return authorizers;
}

/** The usage plan whose ApiStages name this API's stage (API Gateway allows a key one plan per stage). */
function readUsagePlan(
  entries: [string, CfnTemplate['Resources'][string]][],
  apiId: string,
  stageName: string,
  resolver: RestApiEmulatorOptions['resolver'],
  field: Field,
): UsagePlanDefinition | undefined {
  const covers = (resource: CfnTemplate['Resources'][string]) =>
    ((field(resource, 'ApiStages') as Record<string, unknown>[] | undefined) ?? []).some(
      (apiStage) => resolver.resolve(apiStage.ApiId) === apiId && resolver.resolve(apiStage.Stage) === stageName,
    );
  const found = entries.find(([, resource]) => covers(resource));
  if (!found) return undefined;
  const [logicalId, plan] = found;
  const throttle = (field(plan, 'Throttle') ?? {}) as Record<string, unknown>;
  const quota = field(plan, 'Quota') as Record<string, unknown> | undefined;
  return {
    logicalId,
    rateLimit: optionalNumber(throttle.RateLimit),
    burstLimit: optionalNumber(throttle.BurstLimit),
    quota: quota ? { limit: Number(quota.Limit), period: String(quota.Period) } : undefined,
  };
}

function withAccessControl(api: RestApi, options: RestApiEmulatorOptions): RestApi {
  const authorizerArn = (authorizer: AuthorizerDefinition) =>
    `arn:${api.env.partition}:execute-api:${api.env.region}:${api.env.accountId}:${api.apiId}/authorizers/${authorizer.id}`;
  const authorizers = new Authorizers(options.invoke, (authorizer) =>
    permits(api.permissions, authorizer.functionArn, authorizerArn(authorizer), api.env.accountId),
  );
  return { ...api, access: { authorizers, limits: new UsagePlanLimits(api.usagePlan) } };
}

const LAMBDA_INVOCATION_URI = /^arn:[^:]+:apigateway:[^:]+:lambda:path\/2015-03-31\/functions\/(.+)\/invocations$/;

function readIntegration(logicalId: string, value: unknown): Integration {
  const integration = (value ?? {}) as Record<string, unknown>;
  const type = String(integration.Type);
  if (type === 'AWS_PROXY') {
    const uri = String(integration.Uri);
    const functionArn = LAMBDA_INVOCATION_URI.exec(uri)?.[1];
    if (!functionArn) throw new RestApiTemplateError(`The method ${logicalId} proxies to ${uri}, which is not a Lambda function.`);
    return { type, functionArn, timeoutMs: optionalNumber(integration.TimeoutInMillis) ?? DEFAULT_INTEGRATION_TIMEOUT_MS };
  }
  if (type === 'MOCK') {
    const responses = (integration.IntegrationResponses as Record<string, unknown>[] | undefined) ?? [];
    return {
      type,
      requestTemplates: lowerCaseKeys(stringRecord(integration.RequestTemplates)),
      passthroughBehavior: String(integration.PassthroughBehavior ?? 'WHEN_NO_MATCH'),
      responses: responses.map((response) => ({
        statusCode: String(response.StatusCode),
        selectionPattern: optionalString(response.SelectionPattern),
        responseParameters: stringRecord(response.ResponseParameters),
        responseTemplates: stringRecord(response.ResponseTemplates),
      })),
    };
  }
  throw new RestApiTemplateError(`The method ${logicalId} uses a ${type} integration, which the emulator does not serve.`);
}

// ---------------------------------------------------------------------------------------------
// One request

interface Exchange {
  requestId: string;
  extendedRequestId: string;
  traceId: string;
  received: Date;
  method: string;
  /** Whether the request target names a path at all; one that does not leads to no resource. */
  routable: boolean;
  /** The path as sent, `/v1/pets/7` (the target as sent when it names no path). */
  fullPath: string;
  /** The path below the stage, `/pets/7`; what the proxy event's `path` is. */
  path: string;
  query: URLSearchParams;
  rawHeaders: string[];
  sourceIp: string;
  domainName: string;
  apiMethod?: ApiMethod;
  /** What the method's authorizer allowed with. */
  authorization?: Authorization;
  pathParameters: Record<string, string>;
  body: Buffer;
}

interface Answer {
  status: number;
  headers: [string, string][];
  body: Buffer;
}

function newExchange(request: IncomingMessage, api: RestApi, domainName: string): Exchange {
  // A target that names no path (`http://[`, CONNECT's `host:port`, `*`) leads to no resource:
  // answered as any unknown path is (see `answer`). `//x/v1/pets` is that path, not one on host x.
  const target = targetUrl(request.url ?? '');
  const url = target ?? new URL('http://localhost');
  const stagePrefix = `/${api.stageName}`;
  const sourceIp = request.socket.remoteAddress ?? '127.0.0.1';
  const traceId = `Root=1-${Math.floor(Date.now() / 1000).toString(16)}-${randomBytes(12).toString('hex')}`;
  return {
    requestId: randomUUID(),
    extendedRequestId: randomBytes(11).toString('base64'),
    traceId,
    received: new Date(),
    method: request.method ?? 'GET',
    routable: target !== undefined,
    fullPath: target ? url.pathname : (request.url ?? ''),
    path: url.pathname.startsWith(`${stagePrefix}/`) ? url.pathname.slice(stagePrefix.length) : url.pathname === stagePrefix ? '/' : url.pathname,
    query: url.searchParams,
    // What API Gateway adds in front of an integration.
    rawHeaders: [
      ...withoutHeader(request.rawHeaders, 'x-forwarded-for'),
      'X-Amzn-Trace-Id', traceId,
      'X-Forwarded-For', [request.headers['x-forwarded-for'], sourceIp].filter(Boolean).join(', '),
      'X-Forwarded-Port', String(request.socket.localPort ?? ''),
      'X-Forwarded-Proto', 'http',
    ],
    sourceIp,
    domainName,
    pathParameters: {},
    body: Buffer.alloc(0),
  };
}

async function answer(
  request: IncomingMessage,
  exchange: Exchange,
  api: RestApi,
  throttles: Throttles,
  options: RestApiEmulatorOptions,
  log: (line: string) => void,
): Promise<Answer> {
  // Routed as API Gateway routes: `/v1//pets/` is `/v1/pets` (see routingSegments).
  const segments = routingSegments(exchange.fullPath);
  const match = exchange.routable && segments[0] === api.stageName ? findResource(api.root, segments.slice(1), {}) : undefined;
  const apiMethod = match && (match.resource.methods.get(exchange.method) ?? match.resource.methods.get('ANY'));
  // AWS, "Gateway response types for API Gateway": MISSING_AUTHENTICATION_TOKEN also answers "an
  // unsupported API method or resource" (https://docs.aws.amazon.com/apigateway/latest/developerguide/supported-gateway-response-types.html).
  if (!match || !apiMethod) {
    request.resume();
    return gatewayResponse('MISSING_AUTHENTICATION_TOKEN', 'Missing Authentication Token', exchange, api);
  }
  exchange.apiMethod = apiMethod;
  exchange.pathParameters = match.pathParameters;
  if (!throttles.take(apiMethod)) {
    request.resume();
    return gatewayResponse('THROTTLED', 'Too Many Requests', exchange, api);
  }
  const refusal = await accessRefusal(exchange, api, apiMethod);
  if (refusal) {
    request.resume();
    if (refusal.log) log(`(${exchange.requestId}) ${refusal.log}`);
    return gatewayResponse(refusal.type, refusal.message, exchange, api);
  }
  const body = await readRequestBody(request);
  if (!body) return gatewayResponse('REQUEST_TOO_LARGE', 'Request Too Long', exchange, api);
  exchange.body = body;
  const { integration } = apiMethod;
  return integration.type === 'MOCK'
    ? mockAnswer(integration, exchange, api, log)
    : proxyAnswer(integration, exchange, api, options, log);
}

/**
 * The method's authorizer, then its API key's usage plan: undefined when the request may go on to
 * the integration (with `exchange.authorization` set), the refusal otherwise.
 */
async function accessRefusal(exchange: Exchange, api: RestApi, method: ApiMethod): Promise<Refusal | undefined> {
  const access = api.access as NonNullable<RestApi['access']>;
  if (method.authorizerId !== undefined) {
    const authorizer = api.authorizers.get(method.authorizerId) as AuthorizerDefinition;
    const outcome = await access.authorizers.authorize(authorizer, {
      methodArn: `arn:${api.env.partition}:execute-api:${api.env.region}:${api.env.accountId}:${api.apiId}/${api.stageName}/${exchange.method}${exchange.path}`,
      header: (name) => requestHeader(exchange, name),
      query: (name) => exchange.query.getAll(name).at(-1),
      event: () => authorizerEvent(exchange, api, method),
    });
    if (isRefusal(outcome)) return outcome;
    exchange.authorization = outcome;
  }
  if (!method.apiKeyRequired) return undefined;
  const apiKey = api.apiKeySource === 'AUTHORIZER' ? exchange.authorization?.usageIdentifierKey : requestHeader(exchange, 'x-api-key');
  return access.limits.take(apiKey);
}

/** A REQUEST authorizer's event (REST API): the request as the proxy event has it, and the method's ARN. */
function authorizerEvent(exchange: Exchange, api: RestApi, method: ApiMethod): Record<string, unknown> {
  const { partition, region, accountId } = api.env;
  return {
    type: 'REQUEST',
    methodArn: `arn:${partition}:execute-api:${region}:${accountId}:${api.apiId}/${api.stageName}/${exchange.method}${exchange.path}`,
    resource: method.resource.path,
    path: exchange.path,
    httpMethod: exchange.method,
    ...headersAndQuery(exchange.rawHeaders, exchange.query),
    pathParameters: exchange.pathParameters,
    stageVariables: api.stageVariables ?? {},
    requestContext: contextVariables(exchange, api),
  };
}

function findResource(
  node: ApiResource,
  segments: string[],
  pathParameters: Record<string, string>,
): { resource: ApiResource; pathParameters: Record<string, string> } | undefined {
  const [head, ...rest] = segments;
  if (head === undefined) return { resource: node, pathParameters };
  // Literal path parts win over `{param}`, which wins over `{proxy+}`.
  const literal = node.children.find((child) => child.kind === 'literal' && child.name === head);
  const viaLiteral = literal && findResource(literal, rest, pathParameters);
  if (viaLiteral) return viaLiteral;
  const param = node.children.find((child) => child.kind === 'param');
  const viaParam = param && findResource(param, rest, { ...pathParameters, [param.name]: decodePathSegment(head) });
  if (viaParam) return viaParam;
  const greedy = node.children.find((child) => child.kind === 'greedy');
  return greedy && { resource: greedy, pathParameters: { ...pathParameters, [greedy.name]: segments.map(decodePathSegment).join('/') } };
}


// ---------------------------------------------------------------------------------------------
// AWS_PROXY

async function proxyAnswer(
  integration: Extract<Integration, { type: 'AWS_PROXY' }>,
  exchange: Exchange,
  api: RestApi,
  options: RestApiEmulatorOptions,
  log: (line: string) => void,
): Promise<Answer> {
  const method = exchange.apiMethod as ApiMethod;
  const sourceArn = executeApiArn(api, method);
  if (!permits(api.permissions, integration.functionArn, sourceArn, api.env.accountId)) {
    log(`(${exchange.requestId}) Execution failed due to configuration error: Invalid permissions on Lambda function (${integration.functionArn} for ${sourceArn})`);
    return gatewayResponse('API_CONFIGURATION_ERROR', 'Internal server error', exchange, api);
  }
  const invocation = options.invoke(integration.functionArn, proxyEvent(exchange, api)).catch(
    (error: unknown): InvokeOutcome => ({ kind: 'error', errorType: 'InvokeFailed', errorMessage: String(error) }),
  );
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), integration.timeoutMs);
  });
  const outcome = await Promise.race([invocation, timedOut]);
  clearTimeout(timer);
  if (outcome === 'timeout') {
    log(`(${exchange.requestId}) Execution failed due to a timeout error (${integration.timeoutMs} ms)`);
    return gatewayResponse('INTEGRATION_TIMEOUT', 'Endpoint request timed out', exchange, api);
  }
  if (outcome.kind === 'error' && outcome.errorType === 'RequestEntityTooLargeException') {
    // Lambda refused the event (over its 6 MB invoke limit, under API Gateway's 10 MB): a 413, not a 5xx.
    log(`(${exchange.requestId}) Execution failed: ${outcome.errorMessage}`);
    return gatewayResponse('REQUEST_TOO_LARGE', 'Request Too Long', exchange, api, 413);
  }
  // Lambda refused the invocation (throttled past the function's reserved concurrency): nothing ran.
  // AWS, "Handling Lambda errors with an API Gateway API": "If the Lambda API rejects the invocation
  // request, API Gateway returns a 500 error code", body {"message": "Internal server error"}
  // (https://docs.aws.amazon.com/lambda/latest/dg/services-apigateway-errors.html); the response type
  // is INTEGRATION_FAILURE, so a template that customizes it shapes this answer too.
  if (outcome.kind === 'error' && outcome.errorType === THROTTLED_OUTCOME.errorType) {
    log(`(${exchange.requestId}) Lambda invocation failed with status: 429 (${outcome.reason ?? outcome.errorType}): ${outcome.errorMessage}`);
    return gatewayResponse('INTEGRATION_FAILURE', 'Internal server error', exchange, api, 500);
  }
  // A function error, its own timeout included, is no proxy result: 502 through INTEGRATION_FAILURE
  // (AWS, "Set up Lambda proxy integrations in API Gateway": "If the function output is of a
  // different format, API Gateway returns a 502 Bad Gateway error response";
  // https://docs.aws.amazon.com/apigateway/latest/developerguide/set-up-lambda-proxy-integrations.html).
  if (outcome.kind !== 'ok') {
    log(`(${exchange.requestId}) Lambda execution failed with status 200 due to customer function error: ${outcome.errorMessage}`);
    return gatewayResponse('INTEGRATION_FAILURE', 'Internal server error', exchange, api, 502);
  }
  const result = proxyResult(outcome.payload, acceptsBinary(exchange, api));
  if (!result) {
    log(`(${exchange.requestId}) Execution failed due to configuration error: Malformed Lambda proxy response`);
    return gatewayResponse('INTEGRATION_FAILURE', 'Internal server error', exchange, api, 502);
  }
  return result;
}

/**
 * The `execute-api` ARN API Gateway invokes a function as: the method's own HTTP method (`ANY`
 * stays `ANY`) and resource path with its `{param}` parts as written. CDK's grants put `*` where
 * the parameters are, which matches either way.
 */
function executeApiArn(api: RestApi, method: ApiMethod): string {
  const { partition, region, accountId } = api.env;
  return `arn:${partition}:execute-api:${region}:${accountId}:${api.apiId}/${api.stageName}/${method.httpMethod}${method.resource.path}`;
}

/** Whether a resource-based policy statement lets API Gateway invoke the function from this method. */
function permits(permissions: LambdaPermission[], functionArn: string, sourceArn: string, accountId: string): boolean {
  const target = qualifiedName(functionArn);
  return permissions.some(
    (permission) =>
      ['lambda:InvokeFunction', 'lambda:*', '*'].includes(permission.action) &&
      permission.principal === 'apigateway.amazonaws.com' &&
      qualifiedName(permission.functionName) === target &&
      (permission.sourceArn === undefined || arnLike(permission.sourceArn, sourceArn)) &&
      (permission.sourceAccount === undefined || permission.sourceAccount === accountId),
  );
}

/** `name[:qualifier]` of a function given by name, partial or full ARN. */
function qualifiedName(functionName: string): string {
  return /^arn:[^:]+:lambda:[^:]+:\d+:function:(.+)$/.exec(functionName)?.[1] ?? functionName;
}


type RestProxyEvent = Omit<APIGatewayProxyEvent, 'requestContext'> & {
  requestContext: Omit<APIGatewayProxyEvent['requestContext'], 'authorizer'> & { authorizer?: Record<string, unknown> };
};

function proxyEvent(exchange: Exchange, api: RestApi): RestProxyEvent {
  const method = exchange.apiMethod as ApiMethod;
  // A REST API passes a body as text unless its Content-Type is one of the API's binary media types
  // (AWS, "Binary media types for REST APIs"); this stack declares none.
  const empty = exchange.body.length === 0;
  const { body, isBase64Encoded } = isBinary(exchange, api)
    ? { body: empty ? null : exchange.body.toString('base64'), isBase64Encoded: !empty }
    : { body: empty ? null : exchange.body.toString('utf8'), isBase64Encoded: false };
  return {
    resource: method.resource.path,
    path: exchange.path,
    httpMethod: exchange.method,
    ...headersAndQuery(exchange.rawHeaders, exchange.query),
    pathParameters: Object.keys(exchange.pathParameters).length ? exchange.pathParameters : null,
    stageVariables: api.stageVariables,
    requestContext: {
      ...(contextVariables(exchange, api) as unknown as RestProxyEvent['requestContext']),
      // A Lambda authorizer's principalId and context, as a REST API hands them to the integration.
      ...(exchange.authorization
        ? { authorizer: { principalId: exchange.authorization.principalId, ...exchange.authorization.context } }
        : {}),
    },
    body,
    isBase64Encoded,
  };
}

/** A request whose Content-Type is one of the API's binary media types goes to the function base64. */
function isBinary(exchange: Exchange, api: RestApi): boolean {
  return isBinaryType(mediaType(requestHeader(exchange, 'content-type')), api);
}

/**
 * Whether a base64 proxy answer is decoded for this client: only when the first type of its
 * `Accept` is one of the API's binary media types ("Return binary media from a Lambda proxy
 * integration"); otherwise the client gets the base64 text.
 */
function acceptsBinary(exchange: Exchange, api: RestApi): boolean {
  return isBinaryType(mediaType(requestHeader(exchange, 'accept')?.split(',')[0]), api);
}

const isBinaryType = (type: string | undefined, api: RestApi): boolean =>
  type !== undefined && api.binaryMediaTypes.some((binary) => binary === '*/*' || binary.toLowerCase() === type);

const PROXY_RESULT_FIELDS = new Set(['statusCode', 'headers', 'multiValueHeaders', 'body', 'isBase64Encoded']);

/**
 * The response a proxy result stands for, or undefined when API Gateway would call it malformed:
 * not an object, a field it does not know, a status that is not a whole number, a body that is not
 * a string, a header value that is not a string or boolean.
 */
function proxyResult(payload: unknown, decodeBinary: boolean): Answer | undefined {
  if (!isRecord(payload) || Object.keys(payload).some((key) => !PROXY_RESULT_FIELDS.has(key))) return undefined;
  const { statusCode = 200, headers, multiValueHeaders, body, isBase64Encoded = false } = payload;
  const status = typeof statusCode === 'string' && /^\d+$/.test(statusCode) ? Number(statusCode) : statusCode;
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 100 || status > 599) return undefined;
  if (body !== undefined && body !== null && typeof body !== 'string') return undefined;
  if (typeof isBase64Encoded !== 'boolean') return undefined;
  const single = headers === undefined || headers === null ? {} : headers;
  const multi = multiValueHeaders === undefined || multiValueHeaders === null ? {} : multiValueHeaders;
  if (!isRecord(single) || !Object.entries(single).every(([name, value]) => isHeaderName(name) && isHeaderValue(value))) return undefined;
  if (!isRecord(multi) || !Object.entries(multi).every(([name, values]) => isHeaderName(name) && Array.isArray(values) && values.every(isHeaderValue))) {
    return undefined;
  }
  // Both maps merge; where a name is in both, the multi-value list wins.
  const merged = new Map<string, [string, string[]]>();
  for (const [name, value] of Object.entries(single)) merged.set(name.toLowerCase(), [name, [String(value)]]);
  for (const [name, values] of Object.entries(multi)) merged.set(name.toLowerCase(), [name, (values as unknown[]).map(String)]);
  if (!merged.has('content-type')) merged.set('content-type', ['Content-Type', ['application/json']]);
  return {
    status,
    headers: [...merged.values()].flatMap(([name, values]) => {
      const sent = proxyHeaderName(name);
      return sent === undefined ? [] : values.map((value) => [sent, value] as [string, string]);
    }),
    body: Buffer.from(body ?? '', isBase64Encoded && decodeBinary ? 'base64' : 'utf8'),
  };
}

/** A string or boolean that HTTP can carry: no control character but tab (a newline would split the header). */
const isHeaderValue = (value: unknown): boolean =>
  typeof value === 'boolean' || (typeof value === 'string' && !/[\u0000-\u0008\u000a-\u001f\u007f]/.test(value));

/** An HTTP token (RFC 9110): a header name with a space or a colon cannot be sent. */
const isHeaderName = (name: string): boolean => /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name);

/**
 * What a REST API does to a Lambda proxy integration's response headers, from the table in AWS,
 * "Amazon API Gateway important notes for REST APIs"
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-known-issues.html#api-gateway-known-issues-rest-apis),
 * column "Response (http/http_proxy/lambda)", its `lambda` entry: `remapped` headers reach the
 * client as `x-amzn-Remapped-<name>` ("Remapped Overwritten" ones, Date and Server, too: the value
 * under the original name is API Gateway's, e.g. its own Date), `dropped` ones not at all. Every
 * other header passes through (Content-Length is always API Gateway's own, see answerHeaders).
 * `WWW-Authenticate` is remapped: a function's 401 challenge reaches clients as
 * `x-amzn-Remapped-WWW-Authenticate`.
 */
export const PROXY_RESPONSE_HEADER_RULES: Readonly<Record<string, 'remapped' | 'dropped'>> = {
  authorization: 'remapped',
  connection: 'remapped',
  'content-md5': 'remapped',
  date: 'remapped',
  expect: 'dropped',
  host: 'dropped',
  'max-forwards': 'remapped',
  'proxy-authenticate': 'dropped',
  server: 'remapped',
  te: 'dropped',
  'transfer-encoding': 'dropped',
  trailer: 'dropped',
  upgrade: 'dropped',
  'user-agent': 'remapped',
  via: 'dropped',
  'www-authenticate': 'remapped',
};

/** The name a proxy response header goes out under, or undefined when API Gateway drops it. */
function proxyHeaderName(name: string): string | undefined {
  const rule = PROXY_RESPONSE_HEADER_RULES[name.toLowerCase()];
  return rule === 'dropped' ? undefined : rule === 'remapped' ? `x-amzn-Remapped-${name}` : name;
}

// ---------------------------------------------------------------------------------------------
// MOCK

function mockAnswer(integration: Extract<Integration, { type: 'MOCK' }>, exchange: Exchange, api: RestApi, log: (line: string) => void): Answer {
  const contentType = mediaType(requestHeader(exchange, 'content-type')) ?? 'application/json';
  const template = integration.requestTemplates[contentType];
  const templates = Object.keys(integration.requestTemplates).length;
  const refuse =
    template === undefined &&
    (integration.passthroughBehavior === 'NEVER' || (integration.passthroughBehavior === 'WHEN_NO_TEMPLATES' && templates > 0));
  if (refuse) return gatewayResponse('UNSUPPORTED_MEDIA_TYPE', 'Unsupported Media Type', exchange, api);
  const requestBody = template === undefined ? exchange.body.toString('utf8') : renderTemplate(template, templateVariables(exchange, api));
  const statusCode = mockStatus(requestBody);
  if (statusCode === undefined) {
    log(`(${exchange.requestId}) Execution failed due to configuration error: Unable to parse statusCode from the mock request template`);
    return gatewayResponse('API_CONFIGURATION_ERROR', 'Internal server error', exchange, api);
  }
  const response = selectIntegrationResponse(integration.responses, String(statusCode));
  if (!response) {
    log(`(${exchange.requestId}) Execution failed due to configuration error: No match for output mapping and no default output mapping configured`);
    return gatewayResponse('API_CONFIGURATION_ERROR', 'Internal server error', exchange, api);
  }
  const variables = { ...templateVariables(exchange, api), input: { ...requestInput(exchange), body: '' } };
  const selected = selectTemplate(response.responseTemplates, requestHeader(exchange, 'accept'));
  const headers = new Map<string, [string, string]>();
  if (selected) headers.set('content-type', ['Content-Type', selected.mediaType]);
  else headers.set('content-type', ['Content-Type', 'application/json']);
  for (const [target, source] of Object.entries(response.responseParameters)) {
    const name = /^method\.response\.header\.(.+)$/.exec(target)?.[1];
    const value = name && mappingValue(source, exchange, api);
    if (name && value !== undefined) headers.set(name.toLowerCase(), [name, value]);
  }
  return {
    status: Number(response.statusCode),
    headers: [...headers.values()],
    body: Buffer.from(selected ? renderTemplate(selected.template, variables) : '', 'utf8'),
  };
}

function mockStatus(rendered: string): number | undefined {
  if (rendered.trim() === '') return 200;
  try {
    const parsed = JSON.parse(rendered) as unknown;
    const status = isRecord(parsed) ? Number(parsed.statusCode ?? 200) : NaN;
    return Number.isInteger(status) ? status : undefined;
  } catch {
    return undefined;
  }
}

/** The response whose SelectionPattern matches the whole status, else the one without a pattern. */
function selectIntegrationResponse(responses: IntegrationResponse[], status: string): IntegrationResponse | undefined {
  return (
    responses.find((response) => response.selectionPattern && new RegExp(`^(?:${response.selectionPattern})$`, 's').test(status)) ??
    responses.find((response) => !response.selectionPattern)
  );
}

// ---------------------------------------------------------------------------------------------
// Gateway responses

type ResponseType =
  | Refusal['type']
  | 'MISSING_AUTHENTICATION_TOKEN'
  | 'THROTTLED'
  | 'REQUEST_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'INTEGRATION_FAILURE'
  | 'INTEGRATION_TIMEOUT'
  | 'API_CONFIGURATION_ERROR'
  | 'DEFAULT_5XX';

/** API Gateway's own status for each type, when the template does not set one. */
const DEFAULT_STATUS: Record<ResponseType, number> = {
  UNAUTHORIZED: 401,
  ACCESS_DENIED: 403,
  AUTHORIZER_FAILURE: 500,
  AUTHORIZER_CONFIGURATION_ERROR: 500,
  INVALID_API_KEY: 403,
  QUOTA_EXCEEDED: 429,
  MISSING_AUTHENTICATION_TOKEN: 403,
  THROTTLED: 429,
  REQUEST_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  INTEGRATION_FAILURE: 504,
  INTEGRATION_TIMEOUT: 504,
  API_CONFIGURATION_ERROR: 500,
  DEFAULT_5XX: 500,
};

/** The `x-amzn-ErrorType` API Gateway sends with the answers it makes itself. */
const ERROR_TYPES: Partial<Record<ResponseType, string>> = {
  UNAUTHORIZED: 'UnauthorizedException',
  ACCESS_DENIED: 'AccessDeniedException',
  QUOTA_EXCEEDED: 'LimitExceededException',
  MISSING_AUTHENTICATION_TOKEN: 'MissingAuthenticationTokenException',
  THROTTLED: 'TooManyRequestsException',
  INTEGRATION_FAILURE: 'InternalServerErrorException',
  INTEGRATION_TIMEOUT: 'InternalServerErrorException',
  API_CONFIGURATION_ERROR: 'InternalServerErrorException',
  DEFAULT_5XX: 'InternalServerErrorException',
};

const BUILT_IN_TEMPLATE = '{"message":$context.error.messageString}';

/**
 * Gateway responses a template cannot change: "Customizing the default gateway response for 413
 * REQUEST_TOO_LARGE isn't currently supported" (API Gateway, "Amazon API Gateway important notes for
 * REST APIs", https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-known-issues.html).
 */
const UNCUSTOMIZABLE: ReadonlySet<ResponseType> = new Set(['REQUEST_TOO_LARGE']);

/**
 * The template's gateway response of this type, else its DEFAULT_4XX/DEFAULT_5XX, else API
 * Gateway's built-in one. The status: the response's own, else what the situation gives
 * (`observedStatus`, e.g. 502 for a function error), else the type's default.
 */
function gatewayResponse(type: ResponseType, message: string, exchange: Exchange, api: RestApi, observedStatus?: number): Answer {
  const defaultStatus = observedStatus ?? DEFAULT_STATUS[type];
  const definition = UNCUSTOMIZABLE.has(type)
    ? undefined
    : (api.gatewayResponses.get(type) ?? api.gatewayResponses.get(defaultStatus >= 500 ? 'DEFAULT_5XX' : 'DEFAULT_4XX'));
  const status = definition?.statusCode ? Number(definition.statusCode) : defaultStatus;
  const context = { ...contextVariables(exchange, api), error: { message, messageString: JSON.stringify(message), responseType: type } };
  const variables = { ...templateVariables(exchange, api), context };
  const templates = definition && Object.keys(definition.responseTemplates).length ? definition.responseTemplates : { 'application/json': BUILT_IN_TEMPLATE };
  const selected = selectTemplate(templates, requestHeader(exchange, 'accept'));
  const headers = new Map<string, [string, string]>([['content-type', ['Content-Type', selected?.mediaType ?? 'application/json']]]);
  const errorType = ERROR_TYPES[type];
  if (errorType) headers.set('x-amzn-errortype', ['x-amzn-ErrorType', errorType]);
  for (const [target, source] of Object.entries(definition?.responseParameters ?? {})) {
    const name = /^gatewayresponse\.header\.(.+)$/.exec(target)?.[1];
    const value = name && mappingValue(source, exchange, api, context);
    if (name && value !== undefined) headers.set(name.toLowerCase(), [name, value]);
  }
  return {
    status,
    headers: [...headers.values()],
    body: Buffer.from(selected ? renderTemplate(selected.template, variables) : '', 'utf8'),
  };
}

// ---------------------------------------------------------------------------------------------
// Mapping: context, parameters, templates

function contextVariables(exchange: Exchange, api: RestApi): Record<string, unknown> {
  const method = exchange.apiMethod;
  return {
    accountId: api.env.accountId,
    apiId: api.apiId,
    domainName: exchange.domainName,
    domainPrefix: exchange.domainName.split('.')[0]?.split(':')[0] ?? '',
    extendedRequestId: exchange.extendedRequestId,
    httpMethod: exchange.method,
    identity: localIdentity(exchange.sourceIp, requestHeader(exchange, 'user-agent') ?? null),
    path: exchange.fullPath,
    protocol: 'HTTP/1.1',
    requestId: exchange.requestId,
    requestTime: clfTime(exchange.received),
    requestTimeEpoch: exchange.received.getTime(),
    resourceId: method?.resource.id ?? '',
    resourcePath: method?.resource.path ?? '',
    stage: api.stageName,
  };
}

function requestInput(exchange: Exchange): TemplateInput {
  const headers = lastValues(groupPairs(pairs(exchange.rawHeaders))) ?? {};
  return {
    body: exchange.body.toString('utf8'),
    params: { path: exchange.pathParameters, querystring: lastValues(groupPairs([...exchange.query.entries()])) ?? {}, header: headers },
  };
}

function templateVariables(exchange: Exchange, api: RestApi) {
  return { context: contextVariables(exchange, api), input: requestInput(exchange), stageVariables: api.stageVariables };
}

/**
 * A mapping expression's value: a `'literal'`, a method request parameter, a context or stage
 * variable. Undefined when it names nothing (the header is then left out, as API Gateway does).
 */
function mappingValue(source: string, exchange: Exchange, api: RestApi, context = contextVariables(exchange, api)): string | undefined {
  const literal = /^'(.*)'$/s.exec(source);
  if (literal) return literal[1];
  const [, location, name = ''] = /^method\.request\.(header|multivalueheader|querystring|multivaluequerystring|path)\.(.+)$/.exec(source) ?? [];
  if (location === 'path') return exchange.pathParameters[name];
  if (location === 'querystring') return exchange.query.getAll(name).at(-1);
  if (location === 'multivaluequerystring') return exchange.query.has(name) ? exchange.query.getAll(name).join(',') : undefined;
  if (location === 'header') return requestHeader(exchange, name);
  if (location === 'multivalueheader') return requestHeaders(exchange, name).join(',') || undefined;
  const variable = /^(context|stageVariables)\.(.+)$/.exec(source);
  if (variable) {
    const root = variable[1] === 'context' ? context : (api.stageVariables ?? {});
    const value = valueAt(root, `$.${variable[2]}`);
    return value === undefined || value === null ? undefined : String(value);
  }
  return undefined;
}

/** The template for the request's Accept type, else application/json, else the first. */
function selectTemplate(templates: Record<string, string>, accept: string | undefined): { mediaType: string; template: string } | undefined {
  const entries = Object.entries(templates);
  const accepted = (accept ?? '').split(',').map((part) => mediaType(part)).filter((type): type is string => Boolean(type));
  const found =
    entries.find(([type]) => accepted.includes(type.toLowerCase())) ?? entries.find(([type]) => type.toLowerCase() === 'application/json') ?? entries[0];
  return found && { mediaType: found[0], template: found[1] };
}

// ---------------------------------------------------------------------------------------------
// Throttling

/**
 * The stage's method throttling: each method has its own bucket, with the limits of its own
 * MethodSettings entry, else the stage-wide one (`*` on `/*`), under the account's limits.
 */
class Throttles {
  readonly #account = new TokenBucket(ACCOUNT_THROTTLING.rateLimit, ACCOUNT_THROTTLING.burstLimit);
  readonly #methods = new Map<ApiMethod, TokenBucket>();
  constructor(readonly settings: MethodSetting[]) {}

  take(method: ApiMethod): boolean {
    let bucket = this.#methods.get(method);
    if (!bucket) {
      bucket = this.#bucketFor(method);
      this.#methods.set(method, bucket);
    }
    return bucket.take() && this.#account.take();
  }

  #bucketFor(method: ApiMethod): TokenBucket {
    // MethodSettings escape the resource path's slashes as `~1`: `/~1pets~1{petId}`.
    const own = this.settings.find(
      (setting) => setting.httpMethod === method.httpMethod && `/${setting.resourcePath.slice(1).replace(/~1/g, '/')}` === method.resource.path,
    );
    const stage = this.settings.find((setting) => setting.httpMethod === '*' && setting.resourcePath === '/*');
    const rate = own?.rateLimit ?? stage?.rateLimit ?? ACCOUNT_THROTTLING.rateLimit;
    const burst = own?.burstLimit ?? stage?.burstLimit ?? ACCOUNT_THROTTLING.burstLimit;
    return new TokenBucket(rate, burst);
  }
}

// ---------------------------------------------------------------------------------------------
// Sending

function send(response: ServerResponse, exchange: Exchange, result: Answer): void {
  if (response.headersSent || response.destroyed) return;
  response.writeHead(result.status, answerHeaders(exchange, result));
  response.end(result.body);
}

/** The headers of an answer as it goes out: the answer's own but hop-by-hop ones, then API Gateway's. */
function answerHeaders(exchange: Exchange, result: Answer): Record<string, string | string[]> {
  const hopByHop = new Set(['connection', 'transfer-encoding', 'content-length', 'keep-alive']);
  const headers: Record<string, string[]> = Object.create(null);
  const names = new Map<string, string>();
  for (const [name, value] of result.headers) {
    const key = name.toLowerCase();
    if (hopByHop.has(key)) continue;
    const kept = names.get(key) ?? name;
    names.set(key, kept);
    (headers[kept] ??= []).push(value);
  }
  // API Gateway's own headers, on every answer; whatever the function set under these names is replaced.
  for (const [name, value] of [
    ['x-amzn-RequestId', exchange.requestId],
    ['x-amz-apigw-id', exchange.extendedRequestId],
    ['X-Amzn-Trace-Id', exchange.traceId],
    ['Content-Length', String(result.body.length)],
  ] as const) {
    const existing = names.get(name.toLowerCase());
    if (existing) delete headers[existing];
    headers[name] = [value];
  }
  return Object.fromEntries(Object.entries(headers).map(([name, values]) => [name, values.length === 1 ? (values[0] as string) : values]));
}

/**
 * For the server's `connect` event (Node hands a CONNECT only to it, with the raw socket, and
 * without a listener closes the connection unanswered). API Gateway's methods are GET, POST, PUT,
 * DELETE, PATCH, HEAD and OPTIONS (ANY stands for these): no method of the API serves a CONNECT,
 * whatever its target, so it gets what a method and path without an API method get, the
 * MISSING_AUTHENTICATION_TOKEN gateway response (the template makes it the 404 Error; API
 * Gateway's own is a 403), and the connection closes.
 */
function answerConnect(request: IncomingMessage, socket: Duplex, api: RestApi, domainName: string): void {
  socket.on('error', () => socket.destroy());
  try {
    const exchange = newExchange(request, api, domainName);
    const result = gatewayResponse('MISSING_AUTHENTICATION_TOKEN', 'Missing Authentication Token', exchange, api);
    const head = [`HTTP/1.1 ${result.status} ${STATUS_CODES[result.status] ?? 'Error'}`];
    for (const [name, value] of Object.entries(answerHeaders(exchange, result))) {
      for (const one of Array.isArray(value) ? value : [value]) head.push(`${name}: ${one}`);
    }
    head.push('Connection: close', '', '');
    socket.end(Buffer.concat([Buffer.from(head.join('\r\n'), 'latin1'), result.body]), () => socket.destroy());
  } catch {
    socket.destroy();
  }
}

// ---------------------------------------------------------------------------------------------
// Small helpers

function requestHeaders(exchange: Exchange, name: string): string[] {
  const lower = name.toLowerCase();
  return pairs(exchange.rawHeaders)
    .filter(([key]) => key.toLowerCase() === lower)
    .map(([, value]) => value);
}

function requestHeader(exchange: Exchange, name: string): string | undefined {
  return requestHeaders(exchange, name).at(-1);
}

function withoutHeader(rawHeaders: readonly string[], name: string): string[] {
  return pairs(rawHeaders)
    .filter(([key]) => key.toLowerCase() !== name)
    .flat();
}

/** `type/subtype` in lower case, without parameters. */
function mediaType(header: string | undefined): string | undefined {
  const type = header?.split(';')[0]?.trim().toLowerCase();
  return type ? type : undefined;
}

/** `09/Apr/2015:12:34:56 +0000`, as `$context.requestTime` has it. */
function clfTime(date: Date): string {
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(date.getUTCDate())}/${months[date.getUTCMonth()]}/${date.getUTCFullYear()}:${two(date.getUTCHours())}:${two(date.getUTCMinutes())}:${two(date.getUTCSeconds())} +0000`;
}

/** A malformed escape stays as sent. */
function decodePathSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const optionalString = (value: unknown): string | undefined => (value === undefined || value === null || value === '' ? undefined : String(value));

const optionalNumber = (value: unknown): number | undefined => (value === undefined || value === null || value === '' ? undefined : Number(value));

function stringRecord(value: unknown): Record<string, string> {
  return isRecord(value) ? Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, String(entry)])) : {};
}

function stringRecordOrNull(value: unknown): Record<string, string> | null {
  const record = stringRecord(value);
  return Object.keys(record).length ? record : null;
}

const lowerCaseKeys = (record: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(record).map(([key, value]) => [key.toLowerCase(), value]));
