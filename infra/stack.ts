/**
 * One Pet Store deployment: table, cursor secret, one function per route, and the REST API.
 * Everything is derived from the shared definitions in lib/ (routes, table, error codes), so the
 * deployed API cannot drift from the local one. Instantiated once per stage (see app.ts).
 */
import { ArnFormat, CfnOutput, RemovalPolicy, Stack, Tags, Validations, type StackProps } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { join } from 'node:path';
import {
  API_BASE_PATH,
  API_STAGE_NAME,
  resourcePaths,
  routes,
  type OperationName,
  type Route,
  type TableAccess,
} from '../lib/routes.ts';
import { errorStatuses, type ErrorCode } from '../lib/errors.ts';
import { apiKeysPath } from '../lib/parameterStoreKeys.ts';
import { controlTable, petsTable } from '../lib/table.ts';
import { DEPS_LOCK_FILE, HANDLER_EXPORT, PROJECT_ROOT, lambdaBundling } from './bundling.ts';
import {
  GATEWAY_ERRORS,
  JSON_MEDIA_TYPE,
  MOCK_REQUEST_CONTENT_TYPES,
  NOT_FOUND_MESSAGE,
  allowHeader,
  errorTemplate,
  methodNotAllowedMessage,
} from './gatewayErrors.ts';
import { idempotencyEnvironment, idempotencyStatements } from './idempotencyGrants.ts';
import { removalPolicyFor, type StageSettings } from './stages.ts';

export interface PetStoreStackProps extends StackProps {
  readonly settings: StageSettings;
}

export class PetStoreStack extends Stack {
  readonly settings: StageSettings;
  readonly table: dynamodb.Table;
  /** Idempotency records, keys and secrets (lib/table.ts `controlTable`). */
  readonly controlTable: dynamodb.Table;
  readonly cursorSecret: secretsmanager.Secret;
  readonly functions: ReadonlyMap<OperationName, NodejsFunction>;
  readonly api: apigw.RestApi;

  constructor(scope: Construct, id: string, props: PetStoreStackProps) {
    super(scope, id, { terminationProtection: props.settings.protectData, ...props });
    this.settings = props.settings;
    const { stage } = this.settings;
    Tags.of(this).add('service', 'petstore');
    Tags.of(this).add('stage', stage);

    this.table = this.#table();
    this.controlTable = this.#controlTable();
    this.cursorSecret = this.#cursorSecret();
    this.functions = new Map(routes.map((route) => [route.operation, this.#function(route)]));
    this.api = this.#api();

    new CfnOutput(this, 'ApiUrl', {
      description: `Base URL of the ${stage} Pet Store API (ends with ${API_BASE_PATH}/).`,
      value: this.api.url,
    });
    new CfnOutput(this, 'TableName', { description: `The ${stage} pets table.`, value: this.table.tableName });
    new CfnOutput(this, 'ControlTableName', {
      description: `The ${stage} control table (idempotency records, keys, secrets).`,
      value: this.controlTable.tableName,
    });
    new CfnOutput(this, 'ApiKeysParameterPath', {
      description: 'The API keys: one SecureString parameter per key below this path, holding its SHA-256 digest (npm run keys).',
      value: apiKeysPath(stage),
    });
  }

  /** The pets table, exactly as lib/table.ts defines it. */
  #table(): dynamodb.Table {
    const { partitionKey, statusIndex } = petsTable;
    const { protectData } = this.settings;
    const table = new dynamodb.Table(this, 'PetsTable', {
      partitionKey: { name: partitionKey.name, type: attributeType(partitionKey.type) },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      deletionProtection: protectData,
      removalPolicy: removalPolicyFor(this.settings),
    });
    table.addGlobalSecondaryIndex({
      indexName: statusIndex.indexName,
      partitionKey: { name: statusIndex.partitionKey.name, type: attributeType(statusIndex.partitionKey.type) },
      sortKey: { name: statusIndex.sortKey.name, type: attributeType(statusIndex.sortKey.type) },
      projectionType: projectionType(statusIndex.projection),
    });
    return table;
  }

  /** The control table, exactly as lib/table.ts defines it; expired records go by DynamoDB TTL. */
  #controlTable(): dynamodb.Table {
    const { partitionKey, sortKey, timeToLiveAttribute } = controlTable;
    return new dynamodb.Table(this, 'ControlTable', {
      partitionKey: { name: partitionKey.name, type: attributeType(partitionKey.type) },
      sortKey: { name: sortKey.name, type: attributeType(sortKey.type) },
      timeToLiveAttribute,
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      deletionProtection: this.settings.protectData,
      removalPolicy: removalPolicyFor(this.settings),
    });
  }

  /** The HMAC key that signs page cursors, generated by Secrets Manager: nobody has to choose or type it. */
  #cursorSecret(): secretsmanager.Secret {
    const secret = new secretsmanager.Secret(this, 'CursorSecret', {
      description: `Signs the ${this.settings.stage} Pet Store's page cursors (HMAC-SHA256 key).`,
      generateSecretString: { passwordLength: 64, excludePunctuation: true, includeSpace: false },
      removalPolicy: removalPolicyFor(this.settings),
    });
    Validations.of(secret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'The secret is only an HMAC key for opaque page cursors, not a credential: rotating it merely ' +
        'invalidates the cursors in flight (clients get 400 and start again from the first page), so it is ' +
        'rotated on demand (put-secret-value / redeploy) rather than by a rotation Lambda.',
    });
    return secret;
  }

  #function(route: Route): NodejsFunction {
    const { stage, functionMemoryMiB, functionTimeout, logRetention } = this.settings;
    const name = pascal(route.operation);
    const logGroup = new logs.LogGroup(this, `${name}Logs`, {
      retention: logRetention,
      removalPolicy: removalPolicyFor(this.settings),
    });
    const role = new iam.Role(this, `${name}Role`, {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Runs ${route.operation} (${stage}): only what its route needs.`,
      inlinePolicies: { [route.operation]: new iam.PolicyDocument({ statements: this.#statements(route, logGroup) }) },
      // X-Ray's write actions take no resource-level permissions (Resource must be "*"), so they come
      // from AWS's write-only policy rather than from a "*" in our own policy.
      managedPolicies: [iam.ManagedPolicy.fromAwsManagedPolicyName('AWSXRayDaemonWriteAccess')],
    });
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/AWSXRayDaemonWriteAccess]',
      reason:
        'Active tracing needs xray:PutTraceSegments and xray:PutTelemetryRecords, which support no ' +
        'resource-level permissions; AWSXRayDaemonWriteAccess is the AWS-maintained write-only grant for ' +
        'exactly that. Every other permission is an inline statement scoped to one resource.',
    });

    const environment: Record<string, string> = {
      TABLE_NAME: this.table.tableName,
      PETSTORE_API_KEYS_PARAMETER_PATH: apiKeysPath(stage),
      NODE_OPTIONS: '--enable-source-maps',
    };
    if (route.usesCursorSecret) environment.PETSTORE_CURSOR_SECRET_ARN = this.cursorSecret.secretArn;
    Object.assign(environment, idempotencyEnvironment(route.operation, this.controlTable));

    const fn = new NodejsFunction(this, `${name}Function`, {
      description: `${route.method} ${API_BASE_PATH}${route.path}: ${route.summary} (${stage})`,
      entry: join(PROJECT_ROOT, route.entry),
      handler: HANDLER_EXPORT,
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: DEPS_LOCK_FILE,
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: functionMemoryMiB,
      timeout: functionTimeout,
      role,
      logGroup,
      environment,
      bundling: lambdaBundling(),
    });
    // Active tracing, set on the resource itself: the `tracing` prop would also add an inline
    // xray statement on "*" to the role, which AWSXRayDaemonWriteAccess (above) already covers.
    (fn.node.defaultChild as lambda.CfnFunction).tracingConfig = { mode: lambda.Tracing.ACTIVE };
    Validations.of(fn).acknowledge({
      id: 'AwsSolutions-L1',
      reason:
        'Pinned to nodejs22.x on purpose: the bundles are built for node22 (infra/bundling.ts) and the runtime ' +
        'is part of the deployment contract; moving to a newer Node runtime is a deliberate change (new esbuild ' +
        'target, re-test), not one to make because a newer runtime exists.',
    });
    return fn;
  }

  /**
   * Exactly what the route's `tableAccess` says, on exactly the resources it touches, plus its
   * API keys, its log group and (for cursor operations) the cursor secret. Nothing on "*".
   */
  #statements(route: Route, logGroup: logs.LogGroup): iam.PolicyStatement[] {
    const statusIndexArn = `${this.table.tableArn}/index/${petsTable.statusIndex.indexName}`;
    const statements = tableStatements(route, this.table.tableArn, statusIndexArn);
    statements.push(
      new iam.PolicyStatement({
        sid: 'ReadApiKeys',
        actions: ['ssm:GetParametersByPath'],
        resources: [
          this.formatArn({
            service: 'ssm',
            resource: 'parameter',
            resourceName: apiKeysPath(this.settings.stage).slice(1),
            arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
          }),
        ],
      }),
      new iam.PolicyStatement({
        sid: 'WriteLogs',
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        // The log group's ARN attribute ends in ":*", which covers its log streams.
        resources: [logGroup.logGroupArn],
      }),
    );
    if (route.usesCursorSecret) {
      statements.push(
        new iam.PolicyStatement({
          sid: 'ReadCursorSecret',
          actions: ['secretsmanager:GetSecretValue'],
          resources: [this.cursorSecret.secretArn],
        }),
      );
    }
    statements.push(...idempotencyStatements(route.operation, this.controlTable));
    return statements;
  }

  #api(): apigw.RestApi {
    const { stage, throttling, logRetention } = this.settings;
    const accessLogs = new logs.LogGroup(this, 'ApiAccessLogs', {
      retention: logRetention,
      removalPolicy: removalPolicyFor(this.settings),
    });
    const api = new apigw.RestApi(this, 'Api', {
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
        metricsEnabled: true,
      },
      // Execution logging (ERROR level) needs API Gateway's account-wide CloudWatch role. It is an
      // account setting that both stages share, so it is kept even when staging is destroyed.
      cloudWatchRole: true,
      cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN,
    });
    // RestApi adds its own "Endpoint" output; ApiUrl below is the one this stack documents.
    api.node.tryRemoveChild('Endpoint');
    const cloudWatchRole = api.node.tryFindChild('CloudWatchRole');
    if (cloudWatchRole) {
      Validations.of(cloudWatchRole).acknowledge({
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
        reason:
          "The account-level role API Gateway uses to write execution logs (APIG6); AWS's service-role " +
          'policy is the documented grant for it, and the role is assumable by API Gateway only.',
      });
    }

    for (const route of routes) {
      const fn = this.functions.get(route.operation);
      if (!fn) throw new Error(`No function for ${route.operation}`);
      const method = api.root.resourceForPath(route.path).addMethod(
        route.method,
        new apigw.LambdaIntegration(fn, { proxy: true, allowTestInvoke: false }),
        { operationName: route.operation, authorizationType: apigw.AuthorizationType.NONE },
      );
      acknowledgeInFunctionAuth(method);
      this.#document(api, route, method);
    }

    // 405 on every route resource for the methods it lacks: API Gateway prefers the explicit
    // methods above, and sends every other method to ANY.
    for (const [path, allow] of resourcePaths(routes)) {
      acknowledgeInFunctionAuth(
        api.root.resourceForPath(path).addMethod('ANY', methodNotAllowedIntegration(path, allow), {
          operationName: 'methodNotAllowed',
          authorizationType: apigw.AuthorizationType.NONE,
          methodResponses: [
            {
              statusCode: '405',
              responseParameters: { 'method.response.header.Allow': true, 'method.response.header.Content-Type': true },
            },
          ],
        }),
      );
    }

    // 404 for every path no route has: the root itself and, greedily, everything below it.
    for (const resource of [api.root, api.root.addResource('{proxy+}')]) {
      acknowledgeInFunctionAuth(
        resource.addMethod('ANY', notFoundIntegration(), {
          operationName: 'notFound',
          authorizationType: apigw.AuthorizationType.NONE,
          methodResponses: [{ statusCode: '404', responseParameters: { 'method.response.header.Content-Type': true } }],
        }),
      );
    }

    for (const { type, code, message, headers = {} } of GATEWAY_ERRORS) {
      api.addGatewayResponse(`Gateway${pascal(type.responseType.toLowerCase())}`, {
        type,
        statusCode: String(errorStatusOf(code)),
        responseHeaders: { 'Content-Type': quote(JSON_MEDIA_TYPE), ...mapValues(headers, quote) },
        templates: { [JSON_MEDIA_TYPE]: errorTemplate(code, message) },
      });
    }

    Validations.of(api).acknowledge({
      id: 'AwsSolutions-APIG2',
      reason:
        'Requests are validated inside each function, after authentication, against the shared zod schemas ' +
        '(lib/schemas.ts), as the local API does. An API Gateway validator would run before the API-key check, ' +
        'answering 400 to unauthenticated callers that must get 401, and would duplicate rules it cannot express.',
    });
    Validations.of(api.deploymentStage).acknowledge({
      id: 'AwsSolutions-APIG3',
      reason:
        'No WAFv2 web ACL for now (a cost decision, about $5+/month per stage): every request is throttled at ' +
        'the stage and must carry a valid API key before it reaches the table. Attach a web ACL to this stage ' +
        'if the API is opened to unknown clients.',
    });
    return api;
  }

  /** API Gateway's own documentation for the operation, including its deprecation. */
  #document(api: apigw.RestApi, route: Route, method: apigw.Method): void {
    const properties: Record<string, unknown> = { operationId: route.operation, summary: route.summary };
    if (route.deprecated) {
      properties.deprecated = true;
      properties['x-deprecation'] = { ...route.deprecated, successor: `${API_BASE_PATH}${route.deprecated.successor}` };
    }
    const part = new apigw.CfnDocumentationPart(this, `${pascal(route.operation)}Documentation`, {
      restApiId: api.restApiId,
      location: { type: 'METHOD', path: route.path, method: route.method },
      properties: JSON.stringify(properties),
    });
    part.node.addDependency(method);
  }
}

// --- Derivations from the shared definitions -------------------------------------------------

/**
 * The table statements for a route. Each action in `tableAccess` is granted on the table, except
 * Query for a route that `usesStatusIndex`: that route queries the status index only (the table's
 * key is a bare partition key, so a Query on the table itself would just be a GetItem).
 */
export function tableStatements(route: Route, tableArn: string, statusIndexArn: string): iam.PolicyStatement[] {
  const onIndex = (action: TableAccess) => route.usesStatusIndex && action === 'dynamodb:Query';
  const indexActions = route.tableAccess.filter(onIndex);
  const tableActions = route.tableAccess.filter((action) => !onIndex(action));
  const statements: iam.PolicyStatement[] = [];
  if (tableActions.length > 0) {
    statements.push(new iam.PolicyStatement({ sid: 'Table', actions: [...tableActions], resources: [tableArn] }));
  }
  if (indexActions.length > 0) {
    statements.push(
      new iam.PolicyStatement({ sid: 'StatusIndex', actions: [...indexActions], resources: [statusIndexArn] }),
    );
  }
  return statements;
}

function attributeType(type: 'S' | 'N' | 'B'): dynamodb.AttributeType {
  const types = { S: dynamodb.AttributeType.STRING, N: dynamodb.AttributeType.NUMBER, B: dynamodb.AttributeType.BINARY };
  return types[type];
}

function projectionType(projection: 'ALL' | 'KEYS_ONLY'): dynamodb.ProjectionType {
  return projection === 'ALL' ? dynamodb.ProjectionType.ALL : dynamodb.ProjectionType.KEYS_ONLY;
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
        responseParameters: mapValues(
          { ...headers, 'Content-Type': JSON_MEDIA_TYPE },
          quote,
          (name) => `method.response.header.${name}`,
        ),
        responseTemplates: { [JSON_MEDIA_TYPE]: body },
      },
    ],
  });
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

/** APIG4/COG4: the API authenticates callers itself, with a bearer API key checked in the function. */
function acknowledgeInFunctionAuth(method: apigw.Method): void {
  const reason =
    'Callers authenticate with a bearer API key that every function verifies (SHA-256 digests, constant-time ' +
    'compare, keys from the SSM parameter path) before any work, exactly as the local API does; the 404/405 ' +
    'mocks need no authorization because they reveal nothing and run no code.';
  Validations.of(method).acknowledge({ id: 'AwsSolutions-APIG4', reason });
  Validations.of(method).acknowledge({ id: 'AwsSolutions-COG4', reason });
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

const pascal = (name: string): string =>
  name
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('');
