/**
 * The environment of a nodejs22.x execution environment, exactly as Lambda sets it (AWS, "Defined
 * runtime environment variables"), plus the function's own variables (Lambda refuses reserved
 * names) and the one addition the emulator makes, the endpoint of the function's IAM gate; and the
 * Node 22 binary the sandboxes run on.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LambdaHostError, SUPPORTED_RUNTIME, type FunctionDefinition } from './lambdaFunction.ts';

/** Every variable a nodejs22.x function sees that Lambda sets (`_X_AMZN_TRACE_ID` per invocation). */
export const LAMBDA_ENVIRONMENT_NAMES = [
  'AWS_REGION',
  'AWS_DEFAULT_REGION',
  'AWS_EXECUTION_ENV',
  'AWS_LAMBDA_FUNCTION_NAME',
  'AWS_LAMBDA_FUNCTION_MEMORY_SIZE',
  'AWS_LAMBDA_FUNCTION_VERSION',
  'AWS_LAMBDA_INITIALIZATION_TYPE',
  'AWS_LAMBDA_LOG_GROUP_NAME',
  'AWS_LAMBDA_LOG_STREAM_NAME',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'LAMBDA_TASK_ROOT',
  'LAMBDA_RUNTIME_DIR',
  '_HANDLER',
  'LANG',
  'TZ',
  'PATH',
  'NODE_PATH',
  '_X_AMZN_TRACE_ID',
] as const;

/**
 * Names a function's configuration may not set (Lambda refuses the update). LANG, PATH and NODE_PATH
 * are Lambda's too but not reserved: the template may override them.
 */
const RESERVED_ENVIRONMENT_NAMES: readonly string[] = [
  ...LAMBDA_ENVIRONMENT_NAMES.filter((name) => !['LANG', 'PATH', 'NODE_PATH'].includes(name)),
  'AWS_ACCESS_KEY',
  'AWS_LAMBDA_RUNTIME_API',
];

const LAMBDA_PATH = '/var/lang/bin:/usr/local/bin:/usr/bin/:/bin:/opt/bin';
const LAMBDA_NODE_PATH =
  '/opt/nodejs/node22/node_modules:/opt/nodejs/node_modules:/var/runtime/node_modules:/var/runtime:/var/task';
const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The Node 22 binary the functions run on: the project's (its platform's optional dependency), else this Node if it is 22. */
export function lambdaNodeBinary(): string {
  const bundled = join(REPO_ROOT, 'node_modules', '.bin', 'node');
  if (existsSync(bundled)) return realpathSync(bundled);
  if (process.versions.node.split('.')[0] === '22') return process.execPath;
  throw new LambdaHostError(
    `nodejs22.x functions need Node 22: ${bundled} is missing (npm ci installs it) and this Node is ${process.version}.`,
  );
}

/** Exactly the environment Lambda gives the function, plus the template's variables and the endpoint overrides. */
export function lambdaEnvironment(
  definition: FunctionDefinition,
  nodeBinary: string,
  logStreamName: string,
): Record<string, string> {
  const refused = Object.keys(definition.environment).filter((name) => RESERVED_ENVIRONMENT_NAMES.includes(name));
  if (refused.length > 0) {
    throw new LambdaHostError(
      `${definition.functionName}: Lambda refuses reserved environment variable(s) ${refused.join(', ')} in the function's configuration.`,
    );
  }
  return {
    AWS_REGION: definition.region,
    AWS_DEFAULT_REGION: definition.region,
    AWS_EXECUTION_ENV: `AWS_Lambda_${SUPPORTED_RUNTIME}`,
    AWS_LAMBDA_FUNCTION_NAME: definition.functionName,
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(definition.memoryMiB),
    AWS_LAMBDA_FUNCTION_VERSION: definition.functionVersion,
    AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
    AWS_LAMBDA_LOG_GROUP_NAME: definition.logGroupName,
    AWS_LAMBDA_LOG_STREAM_NAME: logStreamName,
    AWS_ACCESS_KEY_ID: definition.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: definition.credentials.secretAccessKey,
    AWS_SESSION_TOKEN: definition.credentials.sessionToken,
    LAMBDA_TASK_ROOT: definition.assetDir,
    LAMBDA_RUNTIME_DIR: '/var/runtime',
    _HANDLER: definition.handler,
    LANG: 'en_US.UTF-8',
    TZ: ':UTC',
    // The Node binary's own folder first, so `node` resolves here as /var/lang/bin does on Lambda.
    PATH: `${dirname(nodeBinary)}:${LAMBDA_PATH}`,
    NODE_PATH: LAMBDA_NODE_PATH,
    ...definition.environment,
    ...definition.endpointOverrides,
  };
}

/** Lambda's stream name: `YYYY/MM/DD/[version]<32 hex>`, one per execution environment. */
export function logStreamNameFor(version: string): string {
  const day = new Date().toISOString().slice(0, 10).replaceAll('-', '/');
  return `${day}/[${version}]${randomBytes(16).toString('hex')}`;
}
