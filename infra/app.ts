/**
 * The CDK app (`cdk.json` runs it with tsx): a stack per stage, `PetStore-staging` and
 * `PetStore-production`, checked by cdk-nag's AWS Solutions rules at synthesis. Works offline:
 * the stacks are environment-agnostic unless CDK_DEFAULT_ACCOUNT/REGION are set, and nothing
 * is looked up. A command that needs an AWS account stops first, in one line, when the CLI found
 * no credentials (./preflight.ts): before the CDK is even loaded, let alone a function bundled.
 */
import { missingCredentials } from './preflight.ts';

const refusal = missingCredentials();
if (refusal) {
  process.stderr.write(`${refusal}\n`);
  process.exit(1);
}

const { App } = await import('aws-cdk-lib');
const { addNagChecks, addPetStoreStacks } = await import('./stacks.ts');
const app = new App();
addPetStoreStacks(app);
addNagChecks(app);
app.synth();
