/**
 * The REST API: one method per route proxied to its function (the `live` alias, see
 * ./deployment.ts), 405 and 404 mocks, API Gateway's own answers as Error bodies (../gatewayErrors.ts),
 * JSON access logs, and each operation's documentation.
 */
import { Validations, type CfnElement } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { errorStatuses, type ErrorCode } from '../../lib/domain/errors.ts';
import { documentedRoutes as routes, type DocumentedRoute as Route } from '../../lib/domain/routeDocs.ts';
import { API_BASE_PATH, API_STAGE_NAME, resourcePaths, type OperationName } from '../../lib/domain/routes.ts';
import { REQUEST_ID_HEADER } from '../../lib/http/requestLog.ts';
import { HARDENING_HEADERS } from '../../lib/http/responses.ts';
import {
  GATEWAY_ERRORS,
  JSON_MEDIA_TYPE,
  MOCK_REQUEST_CONTENT_TYPES,
  NOT_FOUND_MESSAGE,
  allowHeader,
  errorTemplate,
  methodNotAllowedMessage,
} from '../gatewayErrors.ts';
import { publishDocumentation } from '../apiDocumentation.ts';
import { addCorsPreflight } from '../cors.ts';
import { pascal } from '../names.ts';
import type { Stage, Throttle } from '../stages.ts';
import { stageLogGroup, type LogLifetime } from './functions.ts';
import { IdTransparentGroup } from './idTransparentGroup.ts';

export interface RestApiProps {
  readonly stage: Stage;
  /** The API stage's throttle, shared by every caller. */
  readonly throttling: Throttle;
  readonly accessLogs: LogLifetime;
  /** Browser origins answered CORS preflight (../cors.ts). */
  readonly corsAllowedOrigins: readonly string[];
  /** A web ACL guards the stage (./firewall.ts); without one, cdk-nag's APIG3 is acknowledged here. */
  readonly behindWebAcl: boolean;
  /** What each route's method invokes. */
  readonly targets: (operation: OperationName) => lambda.IFunction;
  /** Runs before every route's method (./authorizer.ts); its usageIdentifierKey names the caller's API key. */
  readonly authorizer: apigw.IAuthorizer;
}

export class PetStoreApi extends IdTransparentGroup {
  readonly api: apigw.RestApi;
  readonly accessLogs: logs.LogGroup;
  /** API Gateway's execution log (errors only), declared so that it has the stage's retention and removal policy. */
  readonly executionLogs: logs.LogGroup;
  /** The proxied method of each route (for per-method metrics). */
  readonly methods: ReadonlyMap<OperationName, apigw.Method>;

  constructor(scope: Construct, id: string, props: RestApiProps) {
    super(scope, id);
    const { targets, authorizer } = props;
    this.accessLogs = stageLogGroup(this, 'ApiAccessLogs', props.accessLogs);
    this.api = restApi(this, props, this.accessLogs);
    this.executionLogs = executionLogGroup(this, this.api, props.accessLogs);
    keysFromAuthorizer(this.api);
    this.methods = new Map(
      routes.map((route) => [route.operation, this.#routeMethod(route, targets(route.operation), authorizer)]),
    );
    addCorsPreflight(this.api, props.corsAllowedOrigins);
    this.#fallbackMethods();
    this.#gatewayResponses();
    publishDocumentation(this.api);
  }

  #routeMethod(route: Route, target: lambda.IFunction, authorizer: apigw.IAuthorizer): apigw.Method {
    const method = this.api.root
      .resourceForPath(route.path)
      .addMethod(route.method, new apigw.LambdaIntegration(target, { proxy: true, allowTestInvoke: false }), {
        operationName: route.operation,
        ...keyedMethodOptions(authorizer),
      });
    acknowledgeKeyAuthorizer(method);
    this.#document(route, method);
    return method;
  }

  /** 405 on every route resource for the methods it lacks, 404 on every path no route has. */
  #fallbackMethods(): void {
    // API Gateway prefers the explicit methods, and sends every other method to ANY.
    for (const [path, allow] of resourcePaths(routes)) {
      acknowledgeInFunctionAuth(
        this.api.root.resourceForPath(path).addMethod('ANY', methodNotAllowedIntegration(path, allow), {
          operationName: 'methodNotAllowed',
          authorizationType: apigw.AuthorizationType.NONE,
          methodResponses: [
            {
              statusCode: '405',
              responseParameters: declaredHeaders(['Allow', 'Content-Type', REQUEST_ID_HEADER]),
            },
          ],
        }),
      );
    }
    // The root itself and, greedily, everything below it.
    for (const resource of [this.api.root, this.api.root.addResource('{proxy+}')]) {
      acknowledgeInFunctionAuth(
        resource.addMethod('ANY', notFoundIntegration(), {
          operationName: 'notFound',
          authorizationType: apigw.AuthorizationType.NONE,
          methodResponses: [
            {
              statusCode: '404',
              responseParameters: declaredHeaders(['Content-Type', REQUEST_ID_HEADER]),
            },
          ],
        }),
      );
    }
  }

  #gatewayResponses(): void {
    for (const { type, code, message, headers = {} } of GATEWAY_ERRORS) {
      this.api.addGatewayResponse(`Gateway${pascal(type.responseType.toLowerCase())}`, {
        type,
        statusCode: String(errorStatuses[code]),
        responseHeaders: mapValues({ 'Content-Type': JSON_MEDIA_TYPE, ...headers, ...HARDENING_HEADERS }, quote),
        templates: { [JSON_MEDIA_TYPE]: errorTemplate(code, message) },
      });
    }
  }

  /** API Gateway's own documentation for the operation, including its deprecation. */
  #document(route: Route, method: apigw.Method): void {
    const properties: Record<string, unknown> = { operationId: route.operation, summary: route.summary };
    if (route.deprecated) {
      properties.deprecated = true;
      properties['x-deprecation'] = { ...route.deprecated, successor: `${API_BASE_PATH}${route.deprecated.successor}` };
    }
    const part = new apigw.CfnDocumentationPart(this, `${pascal(route.operation)}Documentation`, {
      restApiId: this.api.restApiId,
      location: { type: 'METHOD', path: route.path, method: route.method },
      properties: JSON.stringify(properties),
    });
    // On the CfnMethod only: the Method construct also holds its invoke permission, which depends on the
    // stage, and the stage waits for the documentation version that snapshots this part.
    part.node.addDependency(method.node.defaultChild as CfnElement);
  }
}

function restApi(
  scope: Construct,
  { stage, throttling, behindWebAcl }: RestApiProps,
  accessLogs: logs.LogGroup,
): apigw.RestApi {
  const api = new apigw.RestApi(scope, 'Api', {
    restApiName: `petstore-${stage}`,
    description: `Pet Store Inventory API (${stage})`,
    endpointConfiguration: { types: [apigw.EndpointType.REGIONAL] },
    deployOptions: {
      stageName: API_STAGE_NAME,
      throttlingRateLimit: throttling.rateLimit,
      throttlingBurstLimit: throttling.burstLimit,
      tracingEnabled: true,
      accessLogDestination: new apigw.LogGroupLogDestination(accessLogs),
      accessLogFormat: accessLogFormat(),
      loggingLevel: apigw.MethodLoggingLevel.ERROR,
      dataTraceEnabled: false,
      // Per-method metrics (the dashboard's latency per operation, the p99 alarms).
      metricsEnabled: true,
    },
    // Execution logging (ERROR level) needs API Gateway's account-wide CloudWatch role: an account
    // setting, owned by the account stack (../accountStack.ts), never by a stage.
    cloudWatchRole: false,
  });
  requireModernTls(api);
  // RestApi adds its own "Endpoint" output; the stack's ApiUrl is the one it documents.
  api.node.tryRemoveChild('Endpoint');
  Validations.of(api).acknowledge({
    id: 'AwsSolutions-APIG2',
    reason:
      'Requests are validated inside each function, after authentication, against the shared JSON schemas ' +
      '(lib/schemas.ts), as the local API does. An API Gateway validator would run before the API-key check, ' +
      'answering 400 to unauthenticated callers that must get 401, and would duplicate rules it cannot express.',
  });
  if (!behindWebAcl) {
    Validations.of(api.deploymentStage).acknowledge({
      id: 'AwsSolutions-APIG3',
      reason:
        'This stage has no WAFv2 web ACL (webAcl in infra/stages.ts; a cost decision, about $10/month at rest): ' +
        "the endpoint is public like production's, but every request is throttled at the stage and must carry a " +
        'valid API key before it reaches the table. Production has one; turn it on here to rehearse production.',
    });
  }
  return api;
}

/**
 * The log group API Gateway writes the stage's execution log to (`loggingLevel` ERROR). API Gateway
 * creates it on the stage's first error, kept forever and left behind by a teardown, unless it
 * exists already: so the stack declares it, under the name API Gateway uses, before the stage.
 */
function executionLogGroup(scope: Construct, api: apigw.RestApi, lifetime: LogLifetime): logs.LogGroup {
  const group = new logs.LogGroup(scope, 'ApiExecutionLogs', {
    logGroupName: `API-Gateway-Execution-Logs_${api.restApiId}/${API_STAGE_NAME}`,
    retention: lifetime.retention,
    removalPolicy: lifetime.removalPolicy,
  });
  api.deploymentStage.node.addDependency(group);
  return group;
}

/**
 * The TLS policy of the execute-api endpoint, the only one the API has: TLS 1.3 and 1.2 with
 * forward-secret (ECDHE) AES-GCM suites, post-quantum hybrid key exchange where the client offers
 * it. A Regional API without one accepts TLS 1.0 and 1.1, with bearer keys on the wire. An
 * enhanced (`SecurityPolicy_`) policy needs an endpoint access mode: STRICT also refuses a request
 * whose SNI names another host or that reached the API through another endpoint type (domain
 * fronting). docs/deploying.md "Deploy" says which clients this leaves out.
 */
const API_TLS = {
  securityPolicy: apigw.SecurityPolicy.TLS13_1_2_PFS_PQ_2025_09,
  endpointAccessMode: apigw.EndpointAccessMode.STRICT,
} as const;

function requireModernTls(api: apigw.RestApi): void {
  // RestApi (aws-cdk-lib 2.276) does not expose the two properties yet (aws/aws-cdk#36663).
  const cfnApi = api.node.defaultChild as apigw.CfnRestApi;
  cfnApi.securityPolicy = API_TLS.securityPolicy;
  cfnApi.endpointAccessMode = API_TLS.endpointAccessMode;
}

/** One JSON object per request; `$context.error.messageString` is already a quoted JSON string. */
function accessLogFormat(): apigw.AccessLogFormat {
  const F = apigw.AccessLogField;
  const quoted: Record<string, string> = {
    requestId: F.contextRequestId(),
    extendedRequestId: F.contextExtendedRequestId(),
    requestTime: F.contextRequestTime(),
    sourceIp: F.contextIdentitySourceIp(),
    httpMethod: F.contextHttpMethod(),
    resourcePath: F.contextResourcePath(),
    path: F.contextPath(),
    protocol: F.contextProtocol(),
    status: F.contextStatus(),
    responseLength: F.contextResponseLength(),
    responseLatency: F.contextResponseLatency(),
    integrationStatus: F.contextIntegrationStatus(),
    integrationLatency: F.contextIntegrationLatency(),
    errorResponseType: F.contextErrorResponseType(),
    // The key's id (lib/http/authorizer.ts), never the key: who was throttled, over quota or refused by a function.
    principalId: F.contextAuthorizerPrincipalId(),
    xrayTraceId: F.contextXrayTraceId(),
  };
  const fields = Object.entries(quoted).map(([key, value]) => `"${key}":"${value}"`);
  fields.push(`"errorMessage":${F.contextErrorMessageString()}`);
  return apigw.AccessLogFormat.custom(`{${fields.join(',')}}`);
}

function mockIntegration(statusCode: number, body: string, headers: Record<string, string>): apigw.MockIntegration {
  const request = JSON.stringify({ statusCode });
  return new apigw.MockIntegration({
    requestTemplates: Object.fromEntries(MOCK_REQUEST_CONTENT_TYPES.map((type) => [type, request])),
    passthroughBehavior: apigw.PassthroughBehavior.NEVER,
    integrationResponses: [
      {
        statusCode: String(statusCode),
        responseParameters: {
          ...mapValues(
            { ...headers, 'Content-Type': JSON_MEDIA_TYPE, ...HARDENING_HEADERS },
            quote,
            (name) => `method.response.header.${name}`,
          ),
          // The request id, as every function answer carries it. Integration responses may map a
          // context variable (docs: "Parameter mapping source reference for REST APIs"); gateway
          // responses may not, so the gateway's own answers carry only x-amzn-RequestId.
          [`method.response.header.${REQUEST_ID_HEADER}`]: 'context.requestId',
        },
        responseTemplates: { [JSON_MEDIA_TYPE]: body },
      },
    ],
  });
}

/** A mock method's response headers, `names` and HARDENING_HEADERS, as its method response declares them. */
function declaredHeaders(names: readonly string[]): Record<string, boolean> {
  return Object.fromEntries(
    [...names, ...Object.keys(HARDENING_HEADERS)].map((name) => [`method.response.header.${name}`, true]),
  );
}

function notFoundIntegration(): apigw.MockIntegration {
  return mockIntegration(errorStatusOf('NOT_FOUND'), errorTemplate('NOT_FOUND', NOT_FOUND_MESSAGE), {});
}

function methodNotAllowedIntegration(path: string, allow: readonly Route['method'][]): apigw.MockIntegration {
  return mockIntegration(
    errorStatusOf('METHOD_NOT_ALLOWED'),
    errorTemplate('METHOD_NOT_ALLOWED', methodNotAllowedMessage(path, allow)),
    { Allow: allowHeader(allow) },
  );
}

/**
 * Every route's method: the key authorizer first, and an API key required, which the authorizer
 * supplies (`usageIdentifierKey`): that is what puts each key under its usage plan (./authorizer.ts).
 */
function keyedMethodOptions(authorizer: apigw.IAuthorizer): apigw.MethodOptions {
  return { authorizationType: apigw.AuthorizationType.CUSTOM, authorizer, apiKeyRequired: true };
}

/** The API's key source: the authorizer's answer, never an `x-api-key` header (clients send Bearer). */
function keysFromAuthorizer(api: apigw.RestApi): void {
  (api.node.defaultChild as apigw.CfnRestApi).apiKeySourceType = apigw.ApiKeySourceType.AUTHORIZER;
}

/**
 * Why no method has a Cognito authorizer (COG4), and the mocks none at all (APIG4): one reason for
 * both, as cdk-nag's acknowledgments are held to one reason per rule (test/infra/nag.test.ts).
 */
const KEY_AUTH_REASON =
  'Callers are machines with bearer API keys issued by npm run keys, not Cognito users: a cached Lambda REQUEST ' +
  'authorizer checks the key (SHA-256 digests from the control table) before any function runs, and every ' +
  'function checks it again; the 404/405 mocks need no authorization because they reveal nothing and run no code.';

/** COG4 on a route's method, which has the key authorizer (so APIG4 holds). */
function acknowledgeKeyAuthorizer(method: apigw.Method): void {
  Validations.of(method).acknowledge({ id: 'AwsSolutions-COG4', reason: KEY_AUTH_REASON });
}

/** APIG4/COG4 on the mocks: no authorizer, no code. */
function acknowledgeInFunctionAuth(method: apigw.Method): void {
  Validations.of(method).acknowledge({ id: 'AwsSolutions-APIG4', reason: KEY_AUTH_REASON });
  Validations.of(method).acknowledge({ id: 'AwsSolutions-COG4', reason: KEY_AUTH_REASON });
}

const errorStatusOf = (code: ErrorCode): number => errorStatuses[code];

const quote = (value: string): string => `'${value}'`;

function mapValues(
  record: Readonly<Record<string, string>>,
  value: (v: string) => string,
  key: (k: string) => string = (k) => k,
): Record<string, string> {
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [key(k), value(v)]));
}
