/**
 * A fixture function for the Lambda host's tests (tools/stage-emulator/src/lambdaHost.ts): `PetStore-<name>`
 * from `assetDir`, with the settings a template's function usually has, its ARN, version and log
 * group named after it; `overrides` change any of them.
 */
import type { FunctionDefinition } from '../../tools/stage-emulator/src/lambdaFunction.ts';

const FIXTURE_CREDENTIALS = {
  accessKeyId: 'AKIAFIXTURE',
  secretAccessKey: 'fixture-secret',
  sessionToken: 'fixture-token',
};

export function fixtureFunction(
  name: string,
  assetDir: string,
  overrides: Partial<FunctionDefinition> = {},
): FunctionDefinition {
  const functionName = `PetStore-${name}`;
  return {
    functionName,
    assetDir,
    handler: 'index.handler',
    runtime: 'nodejs22.x',
    memoryMiB: 128,
    timeoutSeconds: 10,
    region: 'us-east-1',
    environment: {},
    credentials: FIXTURE_CREDENTIALS,
    endpointOverrides: {},
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${functionName}:live`,
    functionVersion: '1',
    logGroupName: `/aws/lambda/${functionName}`,
    log: () => undefined,
    ...overrides,
  };
}
