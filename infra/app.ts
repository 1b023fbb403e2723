/**
 * The CDK app (`cdk.json` runs it with tsx): a stack per stage, `PetStore-staging` and
 * `PetStore-production`, checked by cdk-nag's AWS Solutions rules at synthesis. Works offline:
 * the stacks are environment-agnostic unless CDK_DEFAULT_ACCOUNT/REGION are set, and nothing
 * is looked up.
 */
import { App } from 'aws-cdk-lib';
import { addNagChecks, addPetStoreStacks } from './stacks.ts';

const app = new App();
addPetStoreStacks(app);
addNagChecks(app);
app.synth();
