/**
 * `npm run start:deployed -- --stage <stage> [--port N]`: serves a synthesized stage on
 * localhost exactly as deployed, offline (tools/stage-emulator/src/deployedApi.ts): API Gateway from the
 * template, each function from its cdk.out asset in its own Node 22 process, each function's IAM role
 * enforced on its DynamoDB calls, tables from the template, on an in-memory dynalite. Synthesizes
 * first when cdk.out is missing or older than the app's sources. At stop (Ctrl-C), prints one IAM line per
 * function: its calls allowed and denied, and the grants of its role no call used; `--iam-report
 * <file>` also writes that report as JSON. Exit codes: 0 stopped, 1 failed, 2 bad usage.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { EdgeErrorShape } from '@petstore/local-kit/httpEdges';
import { parsePort } from '@petstore/local-kit/port';
import { typedPath } from '@petstore/local-kit/typedPath';
import { CloudAssemblyError, type CfnTemplate } from './cloudAssembly.ts';
import { startDeployedApi, type DeployedApi } from './deployedApi.ts';
import { LambdaHostError } from './lambdaFunction.ts';
import { DEFAULT_IDLE_TIMEOUT_MS, MAX_INSTANCES } from './lambdaHost.ts';
import { parseInspectTarget, type InspectTarget } from './inspectBundle.ts';
import { watchDeployedStage } from './watch.ts';
import { RestApiPortInUseError, refuseTakenPort } from './restApi.ts';
import { RestApiTemplateError } from './restApiModel.ts';
import { SynthesisError, ensureCloudAssembly } from './freshAssembly.ts';
import type { StageApp } from './stageApp.ts';

/** The usage line; `<stage>` is written out as the product's stages. */
export const USAGE = `Usage: npm run start:deployed -- --stage <stage> [--port <port>] [--cdk-out <dir>] [--parameter Name=Value ...] [--iam-report <file>] [--idle-timeout <seconds>] [--inspect[=<function>[:<port>]]] [--watch]`;
const DEFAULT_PORT = 3100;
/** The npm script that runs this command line. */
const SCRIPT = 'start:deployed';

/** What the product's entry point (scripts/startDeployed.ts) tells `start:deployed`. */
export interface StartDeployedProduct {
  app: StageApp;
  /** Each stage's stack in the assembly, by the name `--stage` takes (`staging: 'PetStore-staging'`). */
  stacks: Readonly<Record<string, string>>;
  /** The cloud assembly's folder unless `--cdk-out` names another. */
  outdir: string;
  /**
   * Values for parameters `cdk deploy` must be given (production's alarm subscriber). Offline they
   * only name a subscription that is never sent anything; `--parameter` replaces them.
   */
  offlineParameters: Readonly<Record<string, string>>;
  /** The function a bare `--inspect` inspects. */
  defaultInspected: string;
  /** How the API writes its answers to requests that never reach a method (default API Gateway's `{"message"}`). */
  edgeErrors?: EdgeErrorShape;
  /** Lines printed after the banner: what to do next with the running stage (issue a key, call it). */
  nextSteps?(stage: string, api: DeployedApi): string[];
}

/** The usage line with the product's stages. */
export const usageOf = (product: Pick<StartDeployedProduct, 'stacks'>): string =>
  USAGE.replace('<stage>', `<${Object.keys(product.stacks).join('|')}>`);

class UsageError extends Error {}

export interface StartDeployedArguments {
  stage: string;
  port: number;
  outdir: string;
  parameters: Record<string, string>;
  /** Where the IAM report is written as JSON at stop. */
  iamReport?: string;
  /** How long a function's sandbox may sit idle before it is recycled (default: lambdaHost's). */
  idleTimeoutMs?: number;
  /** The function run under the Node inspector. */
  inspect?: InspectTarget;
  /** Rebuild changed functions, re-synthesize on changes of the app's code (./watch.ts). */
  watch: boolean;
}

/** start:deployed's command line as node:util's parseArgs reads it; its refusal as a UsageError. */
function parseOptions(argv: readonly string[]) {
  try {
    return parseArgs({
      // A bare --inspect (no value) reads as --inspect= : parseArgs' string options need one.
      args: argv.map((arg) => (arg === '--inspect' ? '--inspect=' : arg)),
      strict: true,
      options: {
        stage: { type: 'string' },
        port: { type: 'string' },
        'cdk-out': { type: 'string' },
        parameter: { type: 'string', multiple: true },
        'iam-report': { type: 'string' },
        'idle-timeout': { type: 'string' },
        inspect: { type: 'string' },
        watch: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

export function parseStartDeployed(
  argv: readonly string[],
  product: Pick<StartDeployedProduct, 'stacks' | 'outdir' | 'offlineParameters' | 'defaultInspected'>,
): StartDeployedArguments | 'help' {
  const stages = Object.keys(product.stacks);
  const { values } = parseOptions(argv);
  if (values.help) return 'help';
  if (values.stage === undefined) throw new UsageError(`--stage is required (${stages.join(' or ')}).`);
  if (!Object.hasOwn(product.stacks, values.stage))
    throw new UsageError(`unknown stage "${values.stage}": the stages are ${stages.join(' and ')}.`);
  let port: number;
  try {
    port = parsePort(values.port, DEFAULT_PORT, '--port');
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const parameters: Record<string, string> = { ...product.offlineParameters };
  for (const assignment of values.parameter ?? []) {
    const at = assignment.indexOf('=');
    if (at < 1) throw new UsageError(`--parameter takes Name=Value, not "${assignment}".`);
    parameters[assignment.slice(0, at)] = assignment.slice(at + 1);
  }
  const idleSeconds = Number(values['idle-timeout']);
  if (values['idle-timeout'] !== undefined && !(idleSeconds > 0 && Number.isFinite(idleSeconds)))
    throw new UsageError(`--idle-timeout takes a number of seconds above 0, not "${values['idle-timeout']}".`);
  const inspect =
    values.inspect === undefined ? undefined : parseInspectTarget(values.inspect, product.defaultInspected);
  if (values.inspect !== undefined && !inspect)
    throw new UsageError(`--inspect takes [<function>][:<port>], not "${values.inspect}".`);
  if (values['iam-report'] === '') throw new UsageError('--iam-report takes a file name.');
  return {
    stage: values.stage,
    port,
    // Paths as typed: from the folder the command was typed in, not the package's (where npm runs it).
    outdir: values['cdk-out'] === undefined ? product.outdir : typedPath(values['cdk-out'], SCRIPT),
    parameters,
    ...(values['idle-timeout'] === undefined ? {} : { idleTimeoutMs: idleSeconds * 1000 }),
    ...(inspect ? { inspect } : {}),
    watch: values.watch ?? false,
    ...(values['iam-report'] === undefined ? {} : { iamReport: typedPath(values['iam-report'], SCRIPT) }),
  };
}

export async function runStartDeployedCommand(argv: string[], product: StartDeployedProduct): Promise<void> {
  let args: StartDeployedArguments | 'help';
  try {
    args = parseStartDeployed(argv, product);
  } catch (error) {
    console.error(`start:deployed: ${(error as Error).message}\n${usageOf(product)}`);
    process.exit(2);
  }
  if (args === 'help') return console.log(usageOf(product));
  if (args.iamReport) refuseUnwritableReport(args.iamReport);
  const { app } = product;
  let running: { readonly api: DeployedApi; close(): Promise<void> };
  try {
    await refuseTakenPort(args.port);
    await ensureCloudAssembly(args.outdir, app);
    const { outdir } = args;
    const start = () =>
      startDeployedApi({
        stackName: product.stacks[args.stage]!,
        outdir,
        app,
        ...(product.edgeErrors ? { edgeErrors: product.edgeErrors } : {}),
        port: args.port,
        parameters: args.parameters,
        ...(args.idleTimeoutMs === undefined ? {} : { idleTimeoutMs: args.idleTimeoutMs }),
        ...(args.inspect ? { inspect: args.inspect } : {}),
        report: (line) => console.log(line),
      });
    if (args.watch)
      running = await watchDeployedStage({ app, start, resynthesize: () => ensureCloudAssembly(outdir, app) });
    else {
      const api = await start();
      running = { api, close: () => api.close() };
    }
  } catch (error) {
    console.error(`start:deployed: ${isOneLineError(error) ? error.message : `failed: ${String(error)}`}`);
    process.exit(1);
  }
  const { iamReport } = args;
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    // Written before close(), which prints the same report's lines and stops the gates.
    let code = 0;
    try {
      if (iamReport) writeFileSync(iamReport, `${JSON.stringify(running.api.iamReport(), null, 2)}\n`);
    } catch (error) {
      console.error(`start:deployed: cannot write the IAM report: ${(error as Error).message}`);
      code = 1;
    }
    void running.close().then(() => process.exit(code));
  };
  // `on`, not `once`: with `once`, run under `node --import tsx` a single SIGINT ended the process
  // before close() had printed the report (test/stage/cli.test.ts saw exit by signal).
  // Set before the banner: a Ctrl-C as soon as its lines appear must find them.
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  printBanner(running.api, args.parameters, args.iamReport);
  for (const line of product.nextSteps?.(args.stage, running.api) ?? []) console.log(line);
  console.log(
    `  scaling: a sandbox per concurrent request, each with its own cold start; past a function's ReservedConcurrentExecutions Lambda's throttle` +
      ` (TooManyRequestsException), past ${MAX_INSTANCES} per function (this runner's cap, not Lambda's) a wait;` +
      ` idle ones recycled after ${(args.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS) / 1000} s (--idle-timeout)`,
  );
  if (args.inspect) {
    console.log(
      `  inspect: ${args.inspect.name}'s sandbox listens for a debugger on 127.0.0.1:${args.inspect.port} (one sandbox, source-mapped bundle in .inspect/);` +
        ' its timeout runs as on Lambda but stops while the debugger has it paused (one line each way), so a breakpoint may hold it as long as it likes',
    );
  }
  if (args.watch)
    console.log(
      `  watching ${app.bundledSources.map((folder) => `${folder}/`).join(' and ')} (rebuild the functions that bundle a changed file) and ${app.infraSource}/ (re-synthesize)`,
    );
}

/**
 * The IAM report's file, written once now so that a path it cannot be written to is said at start,
 * in one line, rather than at Ctrl-C when the run's report would be lost.
 */
function refuseUnwritableReport(file: string): void {
  try {
    writeFileSync(file, '');
  } catch (error) {
    console.error(
      `start:deployed: cannot write the IAM report to ${file} (${(error as NodeJS.ErrnoException).code ?? String(error)}): give --iam-report a file in a folder you can write.`,
    );
    process.exit(2);
  }
}

/** The errors whose message is written for the user, one line each. */
const isOneLineError = (error: unknown): error is Error =>
  [CloudAssemblyError, SynthesisError, RestApiPortInUseError, RestApiTemplateError, LambdaHostError].some(
    (kind) => error instanceof kind,
  );

function printBanner(api: DeployedApi, parameters: Record<string, string>, iamReportFile: string | undefined): void {
  console.log(`${api.stack.stackName} as deployed, offline, on ${api.url}`);
  const used = Object.keys(api.stack.template.Parameters ?? {}).filter((name) => name in parameters);
  if (used.length)
    console.log(
      `  parameters: ${used.map((name) => `${name}=${parameters[name]}`).join(', ')} (--parameter Name=Value to change)`,
    );
  console.log(
    `  functions: ${api.functions.map((f) => f.functionName).join(', ')} (each from its cdk.out asset, its IAM role enforced)`,
  );
  console.log(
    `  IAM: every DynamoDB call checked against its function's role; at stop, each function's calls and unused grants${
      iamReportFile ? ` (JSON in ${iamReportFile})` : ''
    }`,
  );
  console.log(
    `  store: in-memory dynalite on ${api.storeEndpoint}; tables ${api.tables.map((t) => t.tableName).join(', ')}`,
  );
  const webAcl = webAclLine(api.stack.template);
  if (webAcl) console.log(webAcl);
}

/**
 * The banner's line for a stage whose template has a web ACL (AWS WAF), which the emulator does not
 * run: every request reaches the API here, however many or however shaped.
 */
export function webAclLine(template: CfnTemplate): string | undefined {
  const acls = Object.keys(template.Resources).filter((id) => template.Resources[id]!.Type === 'AWS::WAFv2::WebACL');
  if (acls.length === 0) return undefined;
  return `  web ACL: ${acls.join(', ')} (AWS WAF) is not emulated: none of its rules blocks a request here (rate limits, body limits, managed rules), as if it allowed every one`;
}
