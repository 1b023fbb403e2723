/**
 * The CDK app (`cdk.json` runs it with tsx): a stack per stage, `PetStore-staging` and
 * `PetStore-production`, and the account stack they depend on, `PetStore-account`, checked by
 * cdk-nag's AWS Solutions rules at synthesis. Works offline: the stacks are environment-agnostic
 * unless CDK_DEFAULT_ACCOUNT/REGION are set, and nothing is looked up. A command that needs an AWS
 * account stops first, in one line, when the CLI found no credentials (./preflight.ts), and a deploy
 * when the account's Lambda concurrency quota cannot hold the stages' reservations
 * (./concurrencyPreflight.ts): before any function is bundled or anything is synthesized.
 */
import { cdkCliArgs, cdkCommand, missingCredentials } from './preflight.ts';

const stop = (line: string): never => {
  process.stderr.write(`${line}\n`);
  process.exit(1);
};

const refusal = missingCredentials();
if (refusal) stop(refusal);
const cliArgs = process.env.CDK_DEFAULT_ACCOUNT ? cdkCliArgs(process.pid) : undefined;
if (cliArgs && cdkCommand(cliArgs) === 'deploy') {
  const { concurrencyShortfall, lambdaAccountQuota, profileOf } = await import('./concurrencyPreflight.ts');
  const region = process.env.CDK_DEFAULT_REGION ?? 'us-east-1';
  const shortfall = await concurrencyShortfall(
    cliArgs,
    region,
    lambdaAccountQuota(process.env, region, profileOf(cliArgs)),
  );
  if (shortfall) stop(shortfall);
}

const { App } = await import('aws-cdk-lib');
const { addNagChecks, addPetStoreStacks } = await import('./stacks.ts');
const app = new App();
addPetStoreStacks(app);
addNagChecks(app);
app.synth();
