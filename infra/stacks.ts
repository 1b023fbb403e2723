/**
 * The stacks of the app, one PetStoreStack per stage, and the cdk-nag checks on them. infra/app.ts
 * and the infra tests both build their apps with these, so the tests check what `cdk synth` makes.
 */
import { App, Validations, type Environment } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { Construct } from 'constructs';
import { PetStoreStack } from './stack.ts';
import { STAGES, STAGE_SETTINGS, stackName, type Stage } from './stages.ts';

/** The environment from the CLI's credentials when it has any; otherwise environment-agnostic. */
export function defaultEnvironment(env: NodeJS.ProcessEnv = process.env): Environment {
  return {
    ...(env.CDK_DEFAULT_ACCOUNT ? { account: env.CDK_DEFAULT_ACCOUNT } : {}),
    ...(env.CDK_DEFAULT_REGION ? { region: env.CDK_DEFAULT_REGION } : {}),
  };
}

/** Adds the stack of each stage (all of them unless told otherwise) to `scope`. */
export function addPetStoreStacks(
  scope: Construct,
  stages: readonly Stage[] = STAGES,
  env: Environment = defaultEnvironment(),
): Map<Stage, PetStoreStack> {
  return new Map(
    stages.map((stage) => {
      const name = stackName(stage);
      const stack = new PetStoreStack(scope, name, {
        stackName: name,
        description: `Pet Store Inventory API (${stage}): API Gateway, Lambda and DynamoDB`,
        env,
        settings: STAGE_SETTINGS[stage],
      });
      return [stage, stack];
    }),
  );
}

/** Registers cdk-nag's AWS Solutions pack, so synthesis fails on any unacknowledged finding. */
export function addNagChecks(app: App): void {
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
}
