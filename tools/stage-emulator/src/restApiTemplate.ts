/**
 * Reads the one REST API of a CloudFormation template, as deployed, into the emulator's model
 * (./restApiModel.ts): the API and its stage, its resources (./routing.ts), methods and their
 * integrations (AWS_PROXY to a Lambda function, MOCK), gateway responses, Lambda permissions,
 * method settings, authorizers and the usage plan covering its stage (./accessControl.ts).
 * Anything outside that subset is a RestApiTemplateError of one line.
 */
import { readAuthorizers, readUsagePlan } from './accessControl.ts';
import type { CfnTemplate } from './cloudAssembly.ts';
import { readGatewayResponses } from './gatewayResponses.ts';
import type { DeployedEnvironment } from './intrinsics.ts';
import { readResources } from './routing.ts';
import {
  LAMBDA_INVOCATION_URI,
  RestApiTemplateError,
  lowerCaseKeys,
  optionalNumber,
  optionalString,
  stringRecord,
  stringRecordOrNull,
  type ApiResolver,
  type ApiResource,
  type Field,
  type Integration,
  type RestApi,
  type TemplateResource,
} from './restApiModel.ts';

/**
 * An AWS_PROXY integration's timeout when the template sets no `TimeoutInMillis`: "Integration
 * timeout for Regional APIs: 50 milliseconds - 29 seconds for all integration types, including
 * Lambda, Lambda proxy ..." (AWS, "Quotas for configuring and running a REST API in API Gateway",
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-execution-service-limits-table.html).
 */
const DEFAULT_INTEGRATION_TIMEOUT_MS = 29_000;

/** The template's one REST API with its one stage; its access control's state is kept by ./accessControl.ts. */
export function readRestApi(template: CfnTemplate, resolver: ApiResolver, env: DeployedEnvironment): RestApi {
  const ofType = (type: string) => Object.entries(template.Resources).filter(([, resource]) => resource.Type === type);
  const apis = ofType('AWS::ApiGateway::RestApi');
  if (apis.length !== 1) {
    throw new RestApiTemplateError(
      `The template has ${apis.length} AWS::ApiGateway::RestApi resources; the emulator serves exactly one.`,
    );
  }
  const [apiLogicalId, apiResource] = apis[0] as [string, TemplateResource];
  const apiId = resolver.ref(apiLogicalId);
  const field = (resource: { Properties?: Record<string, unknown> }, name: string): unknown =>
    resolver.resolve(resource.Properties?.[name]);
  const ofApi = (type: string) => ofType(type).filter(([, resource]) => field(resource, 'RestApiId') === apiId);

  const stages = ofApi('AWS::ApiGateway::Stage');
  if (stages.length !== 1)
    throw new RestApiTemplateError(
      `The REST API ${apiLogicalId} has ${stages.length} stages; the emulator serves exactly one.`,
    );
  const [, stage] = stages[0] as [string, TemplateResource];

  const root: ApiResource = {
    id: resolver.getAtt(apiLogicalId, 'RootResourceId'),
    path: '/',
    kind: 'root',
    name: '',
    children: [],
    methods: new Map(),
  };
  const resources = readResources(ofApi('AWS::ApiGateway::Resource'), root, resolver, field);
  const api: RestApi = {
    apiId,
    stageName: String(field(stage, 'StageName')),
    stageVariables: stringRecordOrNull(field(stage, 'Variables')),
    root,
    endpointType: String(
      ((field(apiResource, 'EndpointConfiguration') as { Types?: string[] } | undefined)?.Types ?? ['EDGE'])[0],
    ),
    binaryMediaTypes: ((field(apiResource, 'BinaryMediaTypes') as string[] | undefined) ?? []).map((type) =>
      type.replace('~1', '/'),
    ),
    gatewayResponses: readGatewayResponses(ofApi('AWS::ApiGateway::GatewayResponse'), field),
    permissions: ofType('AWS::Lambda::Permission').map(([logicalId, resource]) => ({
      logicalId,
      action: String(field(resource, 'Action')),
      principal: String(field(resource, 'Principal')),
      functionName: String(field(resource, 'FunctionName')),
      sourceArn: optionalString(field(resource, 'SourceArn')),
      sourceAccount: optionalString(field(resource, 'SourceAccount')),
    })),
    methodSettings: ((field(stage, 'MethodSettings') as Record<string, unknown>[] | undefined) ?? []).map(
      (setting) => ({
        resourcePath: String(setting.ResourcePath ?? '/*'),
        httpMethod: String(setting.HttpMethod ?? '*'),
        rateLimit: optionalNumber(setting.ThrottlingRateLimit),
        burstLimit: optionalNumber(setting.ThrottlingBurstLimit),
        ...(setting.MetricsEnabled === undefined ? {} : { metricsEnabled: setting.MetricsEnabled === true }),
      }),
    ),
    env,
    authorizers: readAuthorizers(ofApi('AWS::ApiGateway::Authorizer'), resolver, field),
    apiKeySource: String(field(apiResource, 'ApiKeySourceType') ?? 'HEADER'),
    usagePlan: readUsagePlan(
      ofType('AWS::ApiGateway::UsagePlan'),
      apiId,
      String(field(stage, 'StageName')),
      resolver,
      field,
    ),
  };
  readMethods(ofApi('AWS::ApiGateway::Method'), api, resources, field);
  return api;
}

/** Hangs each method of the API on its resource. */
function readMethods(
  entries: [string, TemplateResource][],
  api: RestApi,
  resources: Map<string, ApiResource>,
  field: Field,
): void {
  for (const [logicalId, method] of entries) {
    const resource = resources.get(String(field(method, 'ResourceId')));
    if (!resource)
      throw new RestApiTemplateError(`The method ${logicalId} names a resource that is not in the REST API.`);
    const httpMethod = String(field(method, 'HttpMethod')).toUpperCase();
    const authorizationType = String(field(method, 'AuthorizationType') ?? 'NONE');
    if (!['NONE', 'CUSTOM'].includes(authorizationType)) {
      throw new RestApiTemplateError(
        `The method ${logicalId} uses ${authorizationType} authorization, which the emulator does not serve.`,
      );
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
}

/** A method's integration: AWS_PROXY to a Lambda function, or MOCK. */
function readIntegration(logicalId: string, value: unknown): Integration {
  const integration = (value ?? {}) as Record<string, unknown>;
  const type = String(integration.Type);
  if (type === 'AWS_PROXY') {
    const uri = String(integration.Uri);
    const functionArn = LAMBDA_INVOCATION_URI.exec(uri)?.[1];
    if (!functionArn)
      throw new RestApiTemplateError(`The method ${logicalId} proxies to ${uri}, which is not a Lambda function.`);
    return {
      type,
      functionArn,
      timeoutMs: optionalNumber(integration.TimeoutInMillis) ?? DEFAULT_INTEGRATION_TIMEOUT_MS,
    };
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
  throw new RestApiTemplateError(
    `The method ${logicalId} uses a ${type} integration, which the emulator does not serve.`,
  );
}
