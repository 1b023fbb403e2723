/**
 * Who may call a method, and how often, as the template defines it: the method's Lambda REQUEST
 * authorizer and its API key's usage plan (read here, run by ./authorizers.ts), the stage's method
 * throttling under the account's limits, and the Lambda resource policies (AWS::Lambda::Permission)
 * that let API Gateway invoke an authorizer or an integration.
 */
import { headersAndQuery } from '@petstore/local-kit/proxyEvent';
import {
  Authorizers,
  TokenBucket,
  arnLike,
  UsagePlanLimits,
  isRefusal,
  readAuthorizerTtl,
  type AuthorizerDefinition,
  type Refusal,
  type UsagePlanDefinition,
} from './authorizers.ts';
import { contextVariables } from './mappingTemplates.ts';
import {
  LAMBDA_INVOCATION_URI,
  RestApiTemplateError,
  executeApiArn,
  optionalNumber,
  requestHeader,
  type ApiMethod,
  type ApiResolver,
  type Exchange,
  type Field,
  type InvokeFunction,
  type LambdaPermission,
  type MethodSetting,
  type RestApi,
  type TemplateResource,
} from './restApiModel.ts';

/** The account-level limits API Gateway applies when nothing narrower is set. */
const ACCOUNT_THROTTLING = { rateLimit: 10_000, burstLimit: 5_000 };

/** The REST API's Lambda authorizers by id. */
export function readAuthorizers(
  entries: [string, TemplateResource][],
  resolver: ApiResolver,
  field: Field,
): Map<string, AuthorizerDefinition> {
  const authorizers = new Map<string, AuthorizerDefinition>();
  for (const [logicalId, resource] of entries) {
    const uri = String(field(resource, 'AuthorizerUri'));
    const functionArn = LAMBDA_INVOCATION_URI.exec(uri)?.[1];
    if (!functionArn)
      throw new RestApiTemplateError(`The authorizer ${logicalId} calls ${uri}, which is not a Lambda function.`);
    const id = resolver.ref(logicalId);
    authorizers.set(id, {
      id,
      logicalId,
      type: String(field(resource, 'Type')),
      functionArn,
      identitySources: String(field(resource, 'IdentitySource') ?? '')
        .split(',')
        .map((source) => source.trim())
        .filter(Boolean),
      ttlSeconds: readAuthorizerTtl(field(resource, 'AuthorizerResultTtlInSeconds')),
    });
  }
  return authorizers;
}

/** The usage plan whose ApiStages name this API's stage (API Gateway allows a key one plan per stage). */
export function readUsagePlan(
  entries: [string, TemplateResource][],
  apiId: string,
  stageName: string,
  resolver: ApiResolver,
  field: Field,
): UsagePlanDefinition | undefined {
  const covers = (resource: TemplateResource) =>
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

/** What access control keeps across requests: the authorizers' cached results and the usage plan's limits. */
export interface AccessControl {
  authorizers: Authorizers;
  limits: UsagePlanLimits;
}

/** The API's authorizers (invoked through `invoke`) and its usage plan's limits. */
export function accessControl(api: RestApi, invoke: InvokeFunction): AccessControl {
  const authorizerArn = (authorizer: AuthorizerDefinition) => executeApiArn(api, `authorizers/${authorizer.id}`);
  const authorizers = new Authorizers(invoke, (authorizer) =>
    permits(api.permissions, authorizer.functionArn, authorizerArn(authorizer), api.env.accountId),
  );
  return { authorizers, limits: new UsagePlanLimits(api.usagePlan) };
}

/**
 * The method's authorizer, then its API key's usage plan: undefined when the request may go on to
 * the integration (with `exchange.authorization` set), the refusal otherwise.
 */
export async function accessRefusal(
  exchange: Exchange,
  api: RestApi,
  access: AccessControl,
  method: ApiMethod,
): Promise<Refusal | undefined> {
  if (method.authorizerId !== undefined) {
    const authorizer = api.authorizers.get(method.authorizerId) as AuthorizerDefinition;
    const methodArn = executeApiArn(api, `${api.stageName}/${exchange.method}${exchange.path}`);
    const outcome = await access.authorizers.authorize(authorizer, {
      methodArn,
      header: (name) => requestHeader(exchange, name),
      query: (name) => exchange.query.getAll(name).at(-1),
      event: () => authorizerEvent(exchange, api, method, methodArn),
    });
    if (isRefusal(outcome)) return outcome;
    exchange.authorization = outcome;
  }
  if (!method.apiKeyRequired) return undefined;
  const apiKey =
    api.apiKeySource === 'AUTHORIZER'
      ? exchange.authorization?.usageIdentifierKey
      : requestHeader(exchange, 'x-api-key');
  return access.limits.take(apiKey);
}

/** A REQUEST authorizer's event (REST API): the request as the proxy event has it, and the method's ARN. */
function authorizerEvent(
  exchange: Exchange,
  api: RestApi,
  method: ApiMethod,
  methodArn: string,
): Record<string, unknown> {
  return {
    type: 'REQUEST',
    methodArn,
    resource: method.resource.path,
    path: exchange.path,
    httpMethod: exchange.method,
    ...headersAndQuery(exchange.rawHeaders, exchange.query),
    pathParameters: exchange.pathParameters,
    stageVariables: api.stageVariables ?? {},
    requestContext: contextVariables(exchange, api),
  };
}

/** Whether a resource-based policy statement lets API Gateway invoke the function from this method. */
export function permits(
  permissions: LambdaPermission[],
  functionArn: string,
  sourceArn: string,
  accountId: string,
): boolean {
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

// ---------------------------------------------------------------------------------------------
// Throttling

/**
 * The stage's method throttling: each method has its own bucket, with the limits of its own
 * MethodSettings entry, else the stage-wide one (`*` on `/*`), under the account's limits.
 */
export class Throttles {
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
      (setting) =>
        setting.httpMethod === method.httpMethod &&
        `/${setting.resourcePath.slice(1).replace(/~1/g, '/')}` === method.resource.path,
    );
    const stage = this.settings.find((setting) => setting.httpMethod === '*' && setting.resourcePath === '/*');
    const rate = own?.rateLimit ?? stage?.rateLimit ?? ACCOUNT_THROTTLING.rateLimit;
    const burst = own?.burstLimit ?? stage?.burstLimit ?? ACCOUNT_THROTTLING.burstLimit;
    return new TokenBucket(rate, burst);
  }
}
