/**
 * Where `npm run keys` finds a stage: its region as the CDK CLI resolves it, its stack's outputs
 * (one CloudFormation DescribeStacks: the control table, the usage plan), and the API Gateway side
 * of its keys (./usagePlanKeys.ts). A failure it can explain is a KeysError, answered in one line.
 */
import {
  CloudFormationClient,
  DescribeStacksCommand,
  type DescribeStacksCommandOutput,
} from '@aws-sdk/client-cloudformation';
import { USAGE_PLAN_OUTPUT, stackName } from '../../infra/names.ts';
import type { Stage } from '../../lib/domain/stages.ts';
import { apiGatewayUsagePlanKeys, type UsagePlanKeys } from './usagePlanKeys.ts';

/** A failure explained in one line of its own (no "failed:" prefix). */
export class KeysError extends Error {}

/** What reads the stage stack's outputs: a CloudFormation client, or a stub in tests. */
export interface StackOutputsReader {
  send(command: DescribeStacksCommand): Promise<DescribeStacksCommandOutput>;
}

export const errorName = (error: unknown): string | undefined => (error instanceof Error ? error.name : undefined);

export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return error.message && error.message !== error.name ? `${error.name}: ${error.message}` : error.name;
}

/** No AWS credentials anywhere the SDK looks: the two ways on, in one line. */
export const noCredentials = (error: Error) =>
  `no AWS credentials (${error.message}). For a deployed stage, log in to its account (aws sso login --profile <profile>, ` +
  'then AWS_PROFILE=<profile> npm run keys -- ...); for a stage run offline, give --table and --endpoint (npm run start:deployed prints them).';

/** The region as the CDK CLI resolves it: AWS_REGION, AWS_DEFAULT_REGION, the profile's, else us-east-1. */
export async function awsRegion(env: Record<string, string | undefined>): Promise<string> {
  const fromEnvironment = env.AWS_REGION || env.AWS_DEFAULT_REGION;
  if (fromEnvironment) return fromEnvironment;
  const fromProfile = await new CloudFormationClient({}).config.region().catch(() => undefined);
  return fromProfile || 'us-east-1';
}

/** Where create, rotate and revoke put a key's API Gateway API key: the stage's usage plan. */
export interface GatewaySide {
  keys: UsagePlanKeys;
  planId: string;
}

export function gatewaySide(
  stage: Stage,
  outputs: Record<string, string>,
  given: UsagePlanKeys | undefined,
  region: string | undefined,
): GatewaySide {
  const planId = requiredOutput(
    stage,
    outputs,
    USAGE_PLAN_OUTPUT,
    'deploy the stack first: its usage plan gives each key its limits).',
  );
  return { keys: given ?? apiGatewayUsagePlanKeys({ region: region ?? 'us-east-1' }), planId };
}

export function requiredOutput(stage: Stage, outputs: Record<string, string>, name: string, hint: string): string {
  const value = outputs[name];
  if (!value) throw new KeysError(`the stack ${stackName(stage)} has no ${name} output (${hint}`);
  return value;
}

/** The stage stack's outputs: one DescribeStacks. */
export async function stackOutputsOf(
  stage: Stage,
  given: StackOutputsReader | undefined,
  region: string | undefined,
): Promise<Record<string, string>> {
  const name = stackName(stage);
  const stacks = given ?? new CloudFormationClient({ region });
  let output: DescribeStacksCommandOutput;
  try {
    output = await stacks.send(new DescribeStacksCommand({ StackName: name }));
  } catch (error) {
    if (errorName(error) === 'ValidationError' && /does not exist/.test(String((error as Error).message))) {
      throw new KeysError(
        `there is no stack ${name}${region ? ` in ${region}` : ''} to find the ${stage} control table in: deploy it ` +
          '(docs/deploying.md "Deploy"), point AWS_REGION or AWS_PROFILE at its account and region, or give --table.',
      );
    }
    throw error;
  } finally {
    if (!given) (stacks as CloudFormationClient).destroy();
  }
  return Object.fromEntries((output.Stacks?.[0]?.Outputs ?? []).map((o) => [o.OutputKey ?? '', o.OutputValue ?? '']));
}
