/**
 * The REST API as the emulator holds it, shared by the files that read and serve it: what the
 * template defines (resources, methods, integrations, gateway responses, Lambda permissions, stage
 * settings, authorizers, usage plan) and one request on its way through (Exchange) to its Answer.
 */
import type { CfnTemplate } from './cloudAssembly.ts';
import type { DeployedEnvironment } from './intrinsics.ts';
import type { Authorization, AuthorizerDefinition, UsagePlanDefinition } from './authorizers.ts';
import type { InvokeOutcome } from './lambdaFunction.ts';
import { pairs } from '@petstore/local-kit/proxyEvent';

/** What reads the template's values: the stack's TemplateResolver (./intrinsics.ts). */
export interface ApiResolver {
  resolve(value: unknown): unknown;
  ref(logicalId: string): string;
  getAtt(logicalId: string, attribute: string): string;
}

export type TemplateResource = CfnTemplate['Resources'][string];

/** Invokes a function (an integration's or an authorizer's) by the ARN its Uri names. */
export type InvokeFunction = (functionArn: string, event: unknown) => Promise<InvokeOutcome>;

/** A template the emulator cannot serve; the message is one line. */
export class RestApiTemplateError extends Error {}

// ---------------------------------------------------------------------------------------------
// The API as the template defines it

export interface ApiResource {
  id: string;
  /** `/`, `/pets`, `/pets/{petId}`, `/{proxy+}` */
  path: string;
  kind: 'root' | 'literal' | 'param' | 'greedy';
  /** The literal path part, or the parameter's name. */
  name: string;
  children: ApiResource[];
  methods: Map<string, ApiMethod>;
}

export interface ApiMethod {
  logicalId: string;
  httpMethod: string;
  resource: ApiResource;
  integration: Integration;
  /** The method's CUSTOM authorizer (its id), if any, and whether it needs an API key (a usage plan's). */
  authorizerId?: string | undefined;
  apiKeyRequired: boolean;
}

export type Integration =
  | { type: 'AWS_PROXY'; functionArn: string; timeoutMs: number }
  | {
      type: 'MOCK';
      requestTemplates: Record<string, string>;
      passthroughBehavior: string;
      responses: IntegrationResponse[];
    };

export interface IntegrationResponse {
  statusCode: string;
  selectionPattern?: string;
  responseParameters: Record<string, string>;
  responseTemplates: Record<string, string>;
}

export interface GatewayResponseDefinition {
  statusCode?: string;
  responseParameters: Record<string, string>;
  responseTemplates: Record<string, string>;
}

export interface LambdaPermission {
  logicalId: string;
  action: string;
  principal: string;
  functionName: string;
  sourceArn?: string;
  sourceAccount?: string;
}

export interface MethodSetting {
  resourcePath: string;
  httpMethod: string;
  rateLimit?: number;
  burstLimit?: number;
  /** Detailed CloudWatch metrics: the per-method dimensions (Resource, Method) are published. */
  metricsEnabled?: boolean;
}

export interface RestApi {
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
}

/** An `execute-api` ARN of the API: `tail` is what follows its id (`staging/GET/pets`, `authorizers/abc123`). */
export function executeApiArn(api: RestApi, tail: string): string {
  const { partition, region, accountId } = api.env;
  return `arn:${partition}:execute-api:${region}:${accountId}:${api.apiId}/${tail}`;
}

/** A resource property of the template, resolved. */
export type Field = (resource: { Properties?: Record<string, unknown> }, name: string) => unknown;

/** The ARN of a Lambda function in an integration's or an authorizer's Uri. */
export const LAMBDA_INVOCATION_URI =
  /^arn:[^:]+:apigateway:[^:]+:lambda:path\/2015-03-31\/functions\/(.+)\/invocations$/;

// ---------------------------------------------------------------------------------------------
// One request

export interface Exchange {
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
  /** How long the integration took to answer, once one was called (`$context.integrationLatency`). */
  integrationLatencyMs?: number;
}

export interface Answer {
  status: number;
  headers: [string, string][];
  body: Buffer;
  /** An answer API Gateway made itself: its gateway response type and message (`$context.error.*`). */
  error?: { responseType: string; message: string };
}

// ---------------------------------------------------------------------------------------------
// Small helpers

export function requestHeaders(exchange: Exchange, name: string): string[] {
  const lower = name.toLowerCase();
  return pairs(exchange.rawHeaders)
    .filter(([key]) => key.toLowerCase() === lower)
    .map(([, value]) => value);
}

export function requestHeader(exchange: Exchange, name: string): string | undefined {
  return requestHeaders(exchange, name).at(-1);
}

/** `type/subtype` in lower case, without parameters. */
export function mediaType(header: string | undefined): string | undefined {
  const type = header?.split(';')[0]?.trim().toLowerCase();
  return type ? type : undefined;
}

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export const optionalString = (value: unknown): string | undefined =>
  value === undefined || value === null || value === '' ? undefined : String(value);

export const optionalNumber = (value: unknown): number | undefined =>
  value === undefined || value === null || value === '' ? undefined : Number(value);

export function stringRecord(value: unknown): Record<string, string> {
  return isRecord(value) ? Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, String(entry)])) : {};
}

export function stringRecordOrNull(value: unknown): Record<string, string> | null {
  const record = stringRecord(value);
  return Object.keys(record).length ? record : null;
}

export const lowerCaseKeys = (record: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(record).map(([key, value]) => [key.toLowerCase(), value]));
