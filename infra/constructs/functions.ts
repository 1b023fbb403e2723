/**
 * One function per route (lib/domain/routes.ts), each with its own log group and a role that may do only
 * what its route needs (./permissions.ts).
 */
import { Validations, type Duration, type RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { join } from 'node:path';
import { documentedRoutes as routes, type DocumentedRoute as Route } from '../../lib/domain/routeDocs.ts';
import { API_BASE_PATH, type OperationName } from '../../lib/domain/routes.ts';
import { STATUS_INDEX_SHARDS_VARIABLE } from '../../lib/store/table.ts';
import {
  DEPS_LOCK_FILE,
  FUNCTION_ENTRY_METADATA,
  FUNCTION_NODE_OPTIONS,
  HANDLER_EXPORT,
  PROJECT_ROOT,
  lambdaBundling,
} from '../bundle/bundling.ts';
import { corsEnvironment } from '../cors.ts';
import { pascal } from '../names.ts';
import type { Stage } from '../stages.ts';
import { IdTransparentGroup } from './idTransparentGroup.ts';
import { functionStatements } from './permissions.ts';

/** How long a log group keeps its records, and whether it outlives the stack. */
export interface LogLifetime {
  readonly retention: logs.RetentionDays;
  readonly removalPolicy: RemovalPolicy;
}

/** What every function of the stage gets alike. */
export interface FunctionLimits {
  readonly memoryMiB: number;
  readonly timeout: Duration;
}

export interface FunctionsProps {
  /** Named in each function's description. */
  readonly stage: Stage;
  readonly limits: FunctionLimits;
  readonly logs: LogLifetime;
  /** Each operation's reserved concurrency, or none: the account's unreserved pool. */
  readonly reservedConcurrency?: Readonly<Record<OperationName, number>> | undefined;
  /** The status index's shard count, which createPet writes and listPets reads (lib/store/table.ts). */
  readonly statusIndexShards: number;
  /** Browser origins the functions answer CORS for (../cors.ts). */
  readonly corsAllowedOrigins: readonly string[];
  readonly tableName: string;
  readonly tableArn: string;
  readonly controlTableName: string;
  readonly controlTableArn: string;
}

export interface RouteFunction {
  readonly route: Route;
  readonly fn: NodejsFunction;
  readonly logGroup: logs.LogGroup;
}

export class Functions extends IdTransparentGroup {
  /** By operation, in the order of `routes`. */
  readonly byOperation: ReadonlyMap<OperationName, RouteFunction>;

  constructor(scope: Construct, id: string, props: FunctionsProps) {
    super(scope, id);
    this.byOperation = new Map(routes.map((route) => [route.operation, routeFunction(this, route, props)]));
  }

  get(operation: OperationName): RouteFunction {
    const found = this.byOperation.get(operation);
    if (!found) throw new Error(`No function for ${operation}`);
    return found;
  }
}

function routeFunction(scope: Construct, route: Route, props: FunctionsProps): RouteFunction {
  const { stage } = props;
  const name = pascal(route.operation);
  const logGroup = stageLogGroup(scope, `${name}Logs`, props.logs);
  const statements = functionStatements(route, {
    tableArn: props.tableArn,
    controlTableArn: props.controlTableArn,
    logGroup,
  });
  const fn = stageFunction(scope, name, {
    entry: route.entry,
    description: `${route.method} ${API_BASE_PATH}${route.path}: ${route.summary} (${stage})`,
    roleDescription: `Runs ${route.operation} (${stage}): only what its route needs.`,
    limits: props.limits,
    policyName: route.operation,
    statements,
    logGroup,
    reservedConcurrentExecutions: props.reservedConcurrency?.[route.operation],
    environment: {
      TABLE_NAME: props.tableName,
      CONTROL_TABLE_NAME: props.controlTableName,
      [STATUS_INDEX_SHARDS_VARIABLE]: String(props.statusIndexShards),
      ...corsEnvironment(props.corsAllowedOrigins),
    },
  });
  return { route, fn, logGroup };
}

export function stageLogGroup(scope: Construct, id: string, { retention, removalPolicy }: LogLifetime): logs.LogGroup {
  return new logs.LogGroup(scope, id, { retention, removalPolicy });
}

/** What tells one of the stage's functions from another. */
export interface StageFunctionProps {
  /** Relative to the repository root, e.g. `functions/getPet.ts`. */
  readonly entry: string;
  readonly description: string;
  readonly roleDescription: string;
  readonly limits: FunctionLimits;
  readonly policyName: string;
  readonly statements: iam.PolicyStatement[];
  readonly logGroup: logs.ILogGroup;
  readonly environment: Record<string, string>;
  /** Its reserved concurrency (stage setting `reservedConcurrency`), or none: the account's unreserved pool. */
  readonly reservedConcurrentExecutions?: number | undefined;
}

/**
 * One function of the stage, bundled as every function is (../bundle/bundling.ts), with its own role holding
 * exactly `statements` (and X-Ray's write-only managed policy), its log group, and active tracing.
 */
export function stageFunction(scope: Construct, name: string, props: StageFunctionProps): NodejsFunction {
  const role = new iam.Role(scope, `${name}Role`, {
    assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
    description: props.roleDescription,
    inlinePolicies: { [props.policyName]: new iam.PolicyDocument({ statements: props.statements }) },
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

  const environment: Record<string, string> = { ...props.environment };
  if (FUNCTION_NODE_OPTIONS) environment.NODE_OPTIONS = FUNCTION_NODE_OPTIONS;

  const fn = new NodejsFunction(scope, `${name}Function`, {
    description: props.description,
    entry: join(PROJECT_ROOT, props.entry),
    handler: HANDLER_EXPORT,
    projectRoot: PROJECT_ROOT,
    depsLockFilePath: DEPS_LOCK_FILE,
    runtime: lambda.Runtime.NODEJS_22_X,
    architecture: lambda.Architecture.ARM_64,
    memorySize: props.limits.memoryMiB,
    timeout: props.limits.timeout,
    role,
    logGroup: props.logGroup,
    environment,
    ...(props.reservedConcurrentExecutions === undefined
      ? {}
      : { reservedConcurrentExecutions: props.reservedConcurrentExecutions }),
    bundling: lambdaBundling(),
  });
  // The source the asset was bundled from, in the assembly's metadata (not the template): what
  // `start:deployed --watch` rebuilds when that source changes (tools/stage-emulator/src/watch.ts).
  fn.node.addMetadata(FUNCTION_ENTRY_METADATA, props.entry);
  // Active tracing, set on the resource itself: the `tracing` prop would also add an inline
  // xray statement on "*" to the role, which AWSXRayDaemonWriteAccess (above) already covers.
  (fn.node.defaultChild as lambda.CfnFunction).tracingConfig = { mode: lambda.Tracing.ACTIVE };
  Validations.of(fn).acknowledge({
    id: 'AwsSolutions-L1',
    reason:
      'Pinned to nodejs22.x on purpose: the bundles are built for node22 (infra/bundle/bundling.ts) and the runtime ' +
      'is part of the deployment contract; moving to a newer Node runtime is a deliberate change (new esbuild ' +
      'target, re-test), not one to make because a newer runtime exists.',
  });
  return fn;
}
