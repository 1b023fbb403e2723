/**
 * The stacks of the app: one PetStoreStack per stage, each depending on the account stack (what the
 * account holds once for every stage), and the cdk-nag checks on them. infra/app.ts and the infra
 * tests both build their apps with these, so the tests check what `cdk synth` makes.
 */
import { type App, DefaultStackSynthesizer, Validations, type Environment } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { Construct } from 'constructs';
import { PetStoreAccountStack } from './accountStack.ts';
import { ACCOUNT_STACK_NAME, BOOTSTRAP_QUALIFIERS } from './names.ts';
import { PetStoreStack } from './stack.ts';
import { STAGES, STAGE_SETTINGS, stackName, type Stage, type StageSettings } from './stages.ts';

/** The environment from the CLI's credentials when it has any; otherwise environment-agnostic. */
function defaultEnvironment(env: NodeJS.ProcessEnv = process.env): Environment {
  return {
    ...(env.CDK_DEFAULT_ACCOUNT ? { account: env.CDK_DEFAULT_ACCOUNT } : {}),
    ...(env.CDK_DEFAULT_REGION ? { region: env.CDK_DEFAULT_REGION } : {}),
  };
}

/** Adds the account stack to `scope`. */
export function addAccountStack(scope: Construct, env: Environment = defaultEnvironment()): PetStoreAccountStack {
  return new PetStoreAccountStack(scope, ACCOUNT_STACK_NAME, {
    stackName: ACCOUNT_STACK_NAME,
    synthesizer: new DefaultStackSynthesizer({ qualifier: BOOTSTRAP_QUALIFIERS.account }),
    description:
      "Pet Store Inventory API, account-wide: API Gateway's CloudWatch Logs role setting, shared by every stage",
    env,
  });
}

/**
 * Adds the stack of each stage (all of them unless told otherwise) to `scope`, each depending on
 * `account` (by default one added here): deploying a stage deploys the account stack first.
 */
export function addPetStoreStacks(
  scope: Construct,
  stages: readonly Stage[] = STAGES,
  env: Environment = defaultEnvironment(),
  account: PetStoreAccountStack = addAccountStack(scope, env),
  settingsOf: (stage: Stage) => StageSettings = (stage) => STAGE_SETTINGS[stage],
): Map<Stage, PetStoreStack> {
  return new Map(
    stages.map((stage) => {
      const name = stackName(stage);
      const settings = settingsOf(stage);
      const stack = new PetStoreStack(scope, name, {
        stackName: name,
        // Its own bootstrap roles (docs/deploying.md "Who may do what"): one stage's deployer cannot assume another's.
        synthesizer: new DefaultStackSynthesizer({ qualifier: BOOTSTRAP_QUALIFIERS[stage] }),
        description: `Pet Store Inventory API (${stage}): API Gateway, Lambda and DynamoDB`,
        env: stageEnvironment(settings, env),
        settings,
      });
      stack.addStackDependency(account, "a stage's execution logs need API Gateway's account-wide CloudWatch role");
      return [stage, stack];
    }),
  );
}

/**
 * A stage's environment: its own `account` where its settings name one, so that the CLI refuses to
 * deploy it with another account's credentials; otherwise the credentials' (environment-agnostic offline).
 * The account stack stays environment-agnostic: it goes to whichever account a stage is deployed to.
 */
function stageEnvironment({ account }: Pick<StageSettings, 'account'>, env: Environment): Environment {
  if (account === undefined) return env;
  if (!/^\d{12}$/.test(account))
    throw new Error(`A stage's account is an AWS account id of 12 digits, not "${account}"`);
  return { ...env, account };
}

/** Registers cdk-nag's AWS Solutions pack, so synthesis fails on any unacknowledged finding. */
export function addNagChecks(app: App): void {
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
}
