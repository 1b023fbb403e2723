/**
 * Names: construct ids from ours, and the names tools outside the CDK app look up (stacks and their
 * outputs). Kept free of aws-cdk-lib, so `npm run keys` can read them without loading the CDK.
 */
import type { Stage } from '../lib/domain/stages.ts';

/** Construct ids from our names: `createPet` -> `CreatePet`, `BAD_REQUEST_BODY` (lowered) -> `BadRequestBody`. */
export const pascal = (name: string): string =>
  name
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('');

export const stackName = (stage: Stage): string => `PetStore-${stage}`;

/** The stack of what the account and Region hold once for every stage (infra/accountStack.ts). */
export const ACCOUNT_STACK_NAME = 'PetStore-account';

/**
 * The stack output naming the control table. CloudFormation names the table (a fixed name would
 * collide with a table retained from an earlier stack), so `npm run keys` reads it from here.
 */
export const CONTROL_TABLE_OUTPUT = 'ControlTableName';

/** The stack output naming the pets table, which `npm run keys -- pets` reads. */
export const PETS_TABLE_OUTPUT = 'TableName';

/** The stack output naming the stage's usage plan, to which `npm run keys` adds each key. */
export const USAGE_PLAN_OUTPUT = 'UsagePlanId';

/** The name of each key's API Gateway API key (its value is the key's SHA-256 hex digest). */
export const gatewayKeyName = (stage: Stage, keyId: string): string => `petstore-${stage}-${keyId}`;

/**
 * The CDK bootstrap qualifier of each stack (`cdk bootstrap --qualifier`, docs/deploying.md "Who may do
 * what"): each stage, and the account stack, deploys through its own bootstrap roles, so a deployer
 * allowed one stage's roles cannot assume another's, and each has its own CloudFormation execution policy.
 */
export const BOOTSTRAP_QUALIFIERS: Readonly<Record<Stage | 'account', string>> = {
  account: 'psaccount',
  staging: 'psstaging',
  production: 'psprod',
};

/** The tags `npm run keys` gives each API Gateway API key, which the key operator's policy requires. */
export const apiKeyTags = (stage: Stage): Readonly<Record<string, string>> => ({ service: 'petstore', stage });
