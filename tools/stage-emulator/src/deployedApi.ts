/**
 * A synthesized stage, run offline exactly as deployed (`npm run start:deployed`): the API from the
 * template (./restApi.ts), each function from its own cdk.out asset in its own Node 22 process
 * (./lambdaHost.ts), each function's DynamoDB calls through a gate that enforces its IAM role from
 * the template (./iamGate.ts), and the tables from the template's own definitions (./tables.ts), on
 * an in-memory dynalite. Each gate accounts for its role's grants (./grantUsage.ts): `iamReport()`
 * says which DynamoDB grants no call used, `close()` prints it, and every denial is logged with the
 * statement that would have allowed it and where the role's grants are written. Nothing here reads
 * the product's own definitions of routes, tables or grants: what runs is what CloudFormation would
 * create, so a drift between the two shows.
 */
import { randomBytes } from 'node:crypto';
import { startFaultProxy, type FaultProxy } from './alarms/faultProxy.ts';
import type { MetricStore } from './alarms/metricStore.ts';
import { readStageMetricSources, stageRecorders, type StageRecorders } from './alarms/recorders.ts';
import type { EdgeErrorShape } from '@petstore/local-kit/httpEdges';
import { startInMemoryStore, type EmbeddedStore } from '@petstore/local-kit/store';
import {
  functionEntries,
  handlerFile,
  readStack,
  type CfnResource,
  type CfnTemplate,
  type StackArtifact,
} from './cloudAssembly.ts';
import { describeRoleSource, infraSources, roleSource, type RoleSource, type SourceFile } from './grantSources.ts';
import { grantReports, iamReportLines, resourceName, withoutHash, type IamReport } from './grantUsage.ts';
import { rolePolicies, startIamGate, type Denial, type IamGate } from './iamGate.ts';
import type { PolicyDocument } from './iamPolicy.ts';
import { OFFLINE_ENVIRONMENT, TemplateResolver } from './intrinsics.ts';
import { buildInspectBundle, type InspectTarget } from './inspectBundle.ts';
import { LambdaHostError } from './lambdaFunction.ts';
import { LambdaFunctionHost } from './lambdaHost.ts';
import { startRestApiEmulator, type RestApiEmulator } from './restApi.ts';
import type { StageApp } from './stageApp.ts';
import { createTablesFromTemplate, type TableKeys } from './tables.ts';

export interface DeployedApiOptions {
  /** The stack to run, e.g. `PetStore-staging`. */
  stackName: string;
  /** The cloud assembly (`cdk.out`), synthesized with bundled assets. */
  outdir: string;
  /**
   * The app the assembly is synthesized from: where a role's grants are looked up in its code, and
   * how `inspect` rebuilds a function. Without it, a role's cdk path alone says where it is written.
   */
  app?: StageApp;
  /** How the API writes its answers to requests that never reach a method (./restApi.ts's `edgeErrors`). */
  edgeErrors?: EdgeErrorShape;
  port?: number;
  /** A changed copy of the stack's template (tests remove a grant from one). */
  template?: CfnTemplate;
  /** Values of template parameters that have no default, as `cdk deploy --parameters` gives them. */
  parameters?: Record<string, string>;
  /** Where the functions' log lines, and the IAM gates' denials, go (default: stderr). */
  log?: (line: string) => void;
  /** Where API Gateway's execution log lines go (default: stderr). */
  apiLog?: (line: string) => void;
  /** Where `close()` prints the IAM report, one line per function (default: `log`). */
  report?: (line: string) => void;
  /** Keep every gate's decisions and signature checks (tests read them); off, nothing grows with traffic. */
  recordDecisions?: boolean;
  /**
   * What the gates forward to, given the store's endpoint (tests put a fault proxy between them).
   * Default: the store itself.
   */
  storeFront?: (storeEndpoint: string) => Promise<string>;
  /**
   * A test seam, never set by `npm run start:deployed`: a module every function's sandbox loads
   * before the runtime (`node --import`), e.g. a coarser clock. Default: none, as on Lambda.
   */
  sandboxPreload?: string;
  /** How long a function's sandbox may sit idle before it is recycled (default: lambdaHost's). */
  idleTimeoutMs?: number;
  /** The function whose sandbox runs under the Node inspector, from a source-mapped bundle (./inspectBundle.ts); needs `app`. */
  inspect?: InspectTarget;
  /**
   * Where the stage puts the metrics its alarms read, as AWS derives them (./alarms/recorders.ts),
   * stamped by the store's clock; the functions' DynamoDB calls then go through `storeFaults`.
   * Default: none recorded, no proxy.
   */
  metrics?: MetricStore;
}

export interface DeployedFunction {
  logicalId: string;
  functionName: string;
  roleLogicalId: string;
  /** Where the role's grants are written in the app's code. */
  roleSource: RoleSource;
  gate: IamGate;
  host: LambdaFunctionHost;
}

export interface DeployedApi {
  /** The stage's base URL, e.g. `http://127.0.0.1:PORT/v1`. */
  url: string;
  stack: StackArtifact;
  /** The in-memory DynamoDB store (dynalite) an operator's tools talk to, as they would to AWS. */
  storeEndpoint: string;
  tables: TableKeys[];
  /** The value of the stack's output `name`, as CloudFormation would give it after the deploy. */
  output(name: string): string;
  functions: DeployedFunction[];
  /**
   * With `metrics`: the proxy every function's DynamoDB calls go through, where the metrics of the
   * store's answers are taken; set its `fault` to throttle or fail a table's operations.
   */
  storeFaults?: FaultProxy;
  /** Each function's calls allowed and denied, and each DynamoDB grant of its role with whether a call used it. */
  iamReport(): IamReport;
  /** Prints the IAM report (`report`), then stops everything; again, it does nothing. */
  close(): Promise<void>;
}

/** The stack as CloudFormation would create it, and the resolver of its intrinsics. */
export function readDeployedStack(
  options: Pick<DeployedApiOptions, 'outdir' | 'stackName' | 'template' | 'parameters'>,
) {
  const read = readStack(options.outdir, options.stackName, options.template);
  const resolver = new TemplateResolver(read, OFFLINE_ENVIRONMENT, options.parameters);
  return { resolver, stack: { ...read, template: withConditionsApplied(read.template, resolver) } };
}

/** The names a function answers to: its operation (`listPets`, `authorizer`), case aside, or its logical id. */
export function functionMatches(logicalId: string, name: string): boolean {
  const short = withoutHash(logicalId).replace(/Function$/, '');
  return [logicalId, withoutHash(logicalId), short].some((candidate) => candidate.toLowerCase() === name.toLowerCase());
}

/** The names `functionMatches` takes, one per function of the stack (for a usage line). */
export function functionNamesOf(options: Pick<DeployedApiOptions, 'outdir' | 'stackName' | 'parameters'>): string[] {
  const { stack } = readDeployedStack(options);
  return resourcesOf(stack.template, 'AWS::Lambda::Function').map(([id]) =>
    lowerFirst(withoutHash(id).replace(/Function$/, '')),
  );
}

const lowerFirst = (name: string): string => name.charAt(0).toLowerCase() + name.slice(1);

export interface DeployedFunctionRun {
  deployed: DeployedFunction;
  storeEndpoint: string;
  /** The value of the stack's output `name` (see DeployedApi). */
  output(name: string): string;
  close(): Promise<void>;
}

/**
 * One function of the stage, as start:deployed runs it but without the API (`npm run invoke --
 * --stage`): the stage's tables on an in-memory dynalite, the function's IAM gate and its host.
 * Undefined when no function of the stack answers to `name`.
 */
export async function startDeployedFunction(
  options: DeployedApiOptions & { name: string },
): Promise<DeployedFunctionRun | undefined> {
  const { stack, resolver } = readDeployedStack(options);
  const found = resourcesOf(stack.template, 'AWS::Lambda::Function').find(([id]) => functionMatches(id, options.name));
  if (!found) return undefined;
  const closers: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const closer of [...closers].reverse()) await closer().catch(() => undefined);
  };
  try {
    const store = await startInMemoryStore();
    closers.push(store.close);
    const tables = await createTablesFromTemplate(store.endpoint, stack.template, resolver);
    const log = options.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
    const deployed = await startFunction(stack, resolver, found[0], found[1], {
      upstream: store.endpoint,
      tables,
      sources: infraSources(options.app),
      log: options.log,
      iamLog: log,
      recordDecisions: options.recordDecisions ?? false,
      sandboxPreload: options.sandboxPreload,
      onStarted: (closer) => closers.push(closer),
    });
    return {
      deployed,
      storeEndpoint: store.endpoint,
      output: outputOf(stack, resolver),
      close: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

export async function startDeployedApi(options: DeployedApiOptions): Promise<DeployedApi> {
  const { stack, resolver } = readDeployedStack(options);
  const closers: (() => Promise<void>)[] = [];
  // The gates' lines; the functions' own default to stderr too, prefixed by the host.
  const log = options.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const stopAll = async () => {
    for (const closer of [...closers].reverse()) await closer().catch(() => undefined);
  };
  try {
    const store: EmbeddedStore = await startInMemoryStore();
    closers.push(store.close);
    const tables = await createTablesFromTemplate(store.endpoint, stack.template, resolver);
    const front = options.storeFront ? await options.storeFront(store.endpoint) : store.endpoint;
    const recorders =
      options.metrics &&
      stageRecorders(options.metrics, readStageMetricSources(stack.template, resolver, OFFLINE_ENVIRONMENT));
    const storeFaults = recorders ? await startFaultProxy(front, { answered: recorders.storeCall }) : undefined;
    if (storeFaults) closers.push(storeFaults.close);
    const upstream = storeFaults?.endpoint ?? front;
    const functions: DeployedFunction[] = [];
    const inspect = inspectedOf(stack, options);
    const sources = infraSources(options.app);
    for (const [logicalId, resource] of resourcesOf(stack.template, 'AWS::Lambda::Function')) {
      const deployed = await startFunction(stack, resolver, logicalId, resource, {
        upstream,
        tables,
        sources,
        log: options.log,
        iamLog: log,
        recordDecisions: options.recordDecisions ?? false,
        sandboxPreload: options.sandboxPreload,
        idleTimeoutMs: options.idleTimeoutMs,
        inspect,
        recorders,
        onStarted: (closer) => closers.push(closer),
      });
      functions.push(deployed);
    }
    const api: RestApiEmulator = await startRestApiEmulator({
      template: stack.template,
      resolver,
      env: OFFLINE_ENVIRONMENT,
      invoke: invokerOf(stack.template, resolver, functions),
      ...(options.port === undefined ? {} : { port: options.port }),
      ...(options.edgeErrors ? { edgeErrors: options.edgeErrors } : {}),
      ...(options.apiLog ? { log: options.apiLog } : {}),
      ...(recorders ? { onAnswered: recorders.answered } : {}),
    });
    closers.push(api.close);
    const iamReport = (): IamReport => ({ stack: stack.stackName, functions: functions.map(functionReport) });
    const report = options.report ?? log;
    let closing: Promise<void> | undefined;
    return {
      url: api.url,
      stack,
      storeEndpoint: store.endpoint,
      tables,
      output: outputOf(stack, resolver),
      functions,
      ...(storeFaults ? { storeFaults } : {}),
      iamReport,
      // Once: a second close() neither prints the report again nor stops what is stopped.
      close: () =>
        (closing ??= (async () => {
          for (const line of iamReportLines(iamReport())) report(line);
          await stopAll();
        })()),
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/** The function `--inspect` names, its entry (from the assembly) and the app that builds it. */
interface InspectedFunction extends InspectTarget {
  logicalId: string;
  entry: string;
  app: StageApp;
}

function inspectedOf(stack: StackArtifact, options: DeployedApiOptions): InspectedFunction | undefined {
  const { inspect, app } = options;
  if (!inspect) return undefined;
  const entries = app ? functionEntries(stack, app.entryMetadata) : new Map<string, string>();
  const logicalId = resourcesOf(stack.template, 'AWS::Lambda::Function')
    .map(([id]) => id)
    .find((id) => functionMatches(id, inspect.name) && entries.has(id));
  if (!logicalId || !app) {
    throw new LambdaHostError(
      `--inspect: ${stack.stackName} has no function "${inspect.name}": its functions are ${functionNamesOf(options).join(', ')}.`,
    );
  }
  return { ...inspect, logicalId, entry: entries.get(logicalId)!, app };
}

interface FunctionWiring {
  upstream: string;
  tables: TableKeys[];
  /** The app's `infraSource` files, where the role's grants are looked up. */
  sources: readonly SourceFile[];
  log: ((line: string) => void) | undefined;
  /** Where a gate's denials are logged. */
  iamLog: (line: string) => void;
  recordDecisions: boolean;
  sandboxPreload: string | undefined;
  idleTimeoutMs?: number | undefined;
  inspect?: InspectedFunction | undefined;
  recorders?: StageRecorders | undefined;
  /** Called with each thing to close as soon as it runs, so a failure further on leaks nothing. */
  onStarted: (closer: () => Promise<void>) => void;
}

/** One function: its gate (its role's policies, its own credentials) and its host (its asset). */
async function startFunction(
  stack: StackArtifact,
  resolver: TemplateResolver,
  logicalId: string,
  resource: CfnResource,
  {
    upstream,
    tables,
    sources,
    log,
    iamLog,
    recordDecisions,
    sandboxPreload,
    idleTimeoutMs,
    inspect,
    recorders,
    onStarted,
  }: FunctionWiring,
): Promise<DeployedFunction> {
  const properties = resource.Properties ?? {};
  const functionName = resolver.ref(logicalId);
  const roleId = logicalIdOf(properties.Role);
  const credentials = sessionCredentials();
  const policies = rolePolicies(stack.template, resolver, roleId);
  const source = roleSource(stack.template, roleId, sidsOf(policies), sources);
  const gate = await startIamGate({
    upstream,
    roleArn: resolver.getAtt(roleId, 'Arn'),
    sessionName: functionName,
    policies,
    tables,
    credentials,
    env: OFFLINE_ENVIRONMENT,
    recordDecisions,
    onDenied: (denial) => iamLog(denialLine(withoutHash(logicalId), roleId, source, denial, tables)),
  });
  onStarted(() => gate.close());
  const variables = (properties.Environment as { Variables?: unknown } | undefined)?.Variables ?? {};
  const inspected = inspect?.logicalId === logicalId ? inspect : undefined;
  const logGroupName = logGroupOf(properties, resolver, functionName);
  const assetDir = inspected
    ? await buildInspectBundle(inspected.app, logicalId, inspected.entry, handlerFile(String(properties.Handler)))
    : stack.assetDir(logicalId);
  const host = new LambdaFunctionHost({
    functionName,
    assetDir,
    handler: String(properties.Handler),
    runtime: String(properties.Runtime),
    memoryMiB: Number(properties.MemorySize ?? 128),
    timeoutSeconds: Number(properties.Timeout ?? 3),
    region: OFFLINE_ENVIRONMENT.region,
    environment: resolver.resolve(variables) as Record<string, string>,
    credentials,
    endpointOverrides: { AWS_ENDPOINT_URL_DYNAMODB: gate.endpoint },
    invokedFunctionArn: resolver.getAtt(logicalId, 'Arn'),
    functionVersion: '1',
    logGroupName,
    ...(log ? { log } : {}),
    ...(sandboxPreload ? { sandboxPreload } : {}),
    ...(properties.ReservedConcurrentExecutions === undefined
      ? {}
      : { reservedConcurrency: Number(resolver.resolve(properties.ReservedConcurrentExecutions)) }),
    ...(idleTimeoutMs === undefined ? {} : { idleTimeoutMs }),
    ...(inspected ? { inspectPort: inspected.port } : {}),
    ...(recorders ? { observer: recorders.lambda(functionName, logGroupName) } : {}),
  });
  onStarted(() => host.close());
  return { logicalId, functionName, roleLogicalId: roleId, roleSource: source, gate, host };
}

function functionReport(deployed: DeployedFunction): IamReport['functions'][number] {
  const grants = grantReports(deployed.gate.usage, deployed.roleSource.statements);
  return {
    function: withoutHash(deployed.logicalId),
    role: deployed.roleLogicalId,
    writtenIn: describeRoleSource(deployed.roleSource),
    allowed: deployed.gate.usage.allowed,
    denied: deployed.gate.usage.denied,
    unusedGrants: grants.filter((grant) => !grant.used).map((grant) => grant.grant),
    grants,
  };
}

/**
 * What a denial is logged as, beside the AccessDeniedException the function logs: the call, the
 * least statement that would allow it, and where the role's grants are written.
 */
function denialLine(fn: string, roleId: string, source: RoleSource, denial: Denial, tables: TableKeys[]): string {
  const { check } = denial;
  const keys = check.leadingKeys ? ` (dynamodb:LeadingKeys ${check.leadingKeys.join(', ')})` : '';
  const statements = Object.entries(source.statements).map(([sid, at]) => `${sid} at ${at}`);
  return (
    `IAM ${fn}: AccessDeniedException for ${check.action} on ${resourceName(check.resource, tables)}${keys}. ` +
    `The statement that would allow it: ${JSON.stringify(denial.wouldAllow)}. ` +
    `${withoutHash(roleId)}'s grants are written in ${describeRoleSource(source)}` +
    (statements.length ? `; its statements: ${statements.join(', ')}.` : '.')
  );
}

const sidsOf = (policies: PolicyDocument[]): string[] =>
  policies.flatMap((policy) =>
    (Array.isArray(policy.Statement) ? policy.Statement : [policy.Statement]).flatMap((s) => (s.Sid ? [s.Sid] : [])),
  );

/**
 * What API Gateway's integration URIs name: a function's `live` alias (or the function itself),
 * each mapped to the host of the function it points at.
 */
function invokerOf(template: CfnTemplate, resolver: TemplateResolver, functions: DeployedFunction[]) {
  const hosts = new Map<string, LambdaFunctionHost>();
  for (const deployed of functions) {
    hosts.set(resolver.getAtt(deployed.logicalId, 'Arn'), deployed.host);
    hosts.set(deployed.functionName, deployed.host);
  }
  for (const [aliasId, alias] of resourcesOf(template, 'AWS::Lambda::Alias')) {
    const target = functions.find((f) => f.logicalId === logicalIdOf(alias.Properties?.FunctionName));
    if (target) hosts.set(resolver.ref(aliasId), target.host);
  }
  return async (functionArn: string, event: unknown) => {
    const host = hosts.get(functionArn);
    if (!host)
      return {
        kind: 'error' as const,
        errorType: 'ResourceNotFoundException',
        errorMessage: `No function ${functionArn}`,
      };
    return host.invoke(event);
  };
}

/** The template as CloudFormation would create it: a resource whose `Condition` is false does not exist. */
function withConditionsApplied(template: CfnTemplate, resolver: TemplateResolver): CfnTemplate {
  const kept = Object.entries(template.Resources).filter(
    ([, resource]) => !resource.Condition || resolver.condition(resource.Condition),
  );
  return { ...template, Resources: Object.fromEntries(kept) };
}

function resourcesOf(template: CfnTemplate, type: string): [string, CfnResource][] {
  return Object.entries(template.Resources).filter(([, resource]) => resource.Type === type);
}

/** The logical id in a `{Ref: id}` or `{Fn::GetAtt: [id, attr]}`. */
function logicalIdOf(value: unknown): string {
  const object = (value ?? {}) as { Ref?: string; 'Fn::GetAtt'?: [string, string] | string };
  const getAtt = object['Fn::GetAtt'];
  const id = object.Ref ?? (Array.isArray(getAtt) ? getAtt[0] : getAtt?.split('.')[0]);
  if (!id) throw new Error(`Expected a Ref or Fn::GetAtt, got ${JSON.stringify(value)}`);
  return id;
}

function logGroupOf(properties: Record<string, unknown>, resolver: TemplateResolver, functionName: string): string {
  const group = (properties.LoggingConfig as { LogGroup?: unknown } | undefined)?.LogGroup;
  return group === undefined ? `/aws/lambda/${functionName}` : resolver.resolveString(group);
}

/** The stack's outputs by name, each resolved when asked for (one may need a value not known offline). */
function outputOf(stack: StackArtifact, resolver: TemplateResolver): (name: string) => string {
  return (name) => {
    const output = stack.template.Outputs?.[name];
    if (!output) throw new Error(`${stack.stackName} has no ${name} output`);
    return resolver.resolveString(output.Value);
  };
}

/** Credentials as Lambda hands a function its role's session: an access key, a secret and a session token. */
function sessionCredentials() {
  return {
    accessKeyId: `ASIA${randomBytes(8).toString('hex').toUpperCase()}`,
    secretAccessKey: randomBytes(30).toString('base64'),
    sessionToken: randomBytes(48).toString('base64'),
  };
}
