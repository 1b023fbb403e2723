/**
 * What the stage emulator (tools/stage-emulator) is told of this app, by the scripts that start it
 * (scripts/startDeployed.ts, scripts/invoke.ts) and by the tests that run a stage: where the app's
 * sources are, how it is synthesized and bundled, its stages' stacks, the parameters a deploy must
 * be given, the function a bare `--inspect` inspects, and the shape of its edge errors. The
 * emulator reads everything else from the cloud assembly. Plain values: this module does not
 * import the emulator (it is imported by scripts and tests only), the types are checked where the
 * values are passed.
 */
import { join } from 'node:path';
import { FUNCTION_ENTRY_METADATA, PROJECT_ROOT, deployedBundleOptions } from '../infra/bundle/bundling.ts';
import { ALARM_EMAIL_PARAMETER } from '../infra/constructs/alarmTopic.ts';
import { stackName } from '../infra/names.ts';
import { routes } from '../lib/domain/routes.ts';
import { STAGES } from '../lib/domain/stages.ts';
import { apiErrorAnswer } from './errorAnswer.ts';
import { BUNDLED_SOURCES } from './sources.ts';

/** The CDK app, as the emulator's `StageApp`. */
export const STAGE_APP = {
  root: PROJECT_ROOT,
  /** What the synthesized templates and assets are made from. */
  assemblySources: ['infra', 'lib', 'functions', 'contract', 'cdk.json', 'package-lock.json', 'openapi.json'],
  /** The CDK CLI pinned in devDependencies; offline: no notices fetched. */
  synthesize: [join(PROJECT_ROOT, 'node_modules', '.bin', 'cdk'), 'synth', '--quiet', '--no-notices'],
  bundledSources: BUNDLED_SOURCES,
  infraSource: 'infra',
  bundleOptions: deployedBundleOptions,
  entryMetadata: FUNCTION_ENTRY_METADATA,
} as const;

/** Where `cdk synth` writes the assembly the stages run from. */
export const DEFAULT_OUTDIR = join(PROJECT_ROOT, 'cdk.out');

/** Each stage's stack, by stage name. */
export const STAGE_STACKS: Readonly<Record<string, string>> = Object.fromEntries(
  STAGES.map((stage) => [stage, stackName(stage)]),
);

/**
 * Values for parameters `cdk deploy` must be given (production's alarm subscriber). Offline they
 * only name a subscription that is never sent anything; `--parameter` replaces them.
 */
export const OFFLINE_PARAMETERS: Readonly<Record<string, string>> = { [ALARM_EMAIL_PARAMETER]: 'alarms@example.com' };

/** The first API operation, inspected when `--inspect` names none. */
export const DEFAULT_INSPECTED = routes[0]!.operation;

/** The stage's answers to requests that never reach a method: the service's Error, as the local API answers them. */
export const EDGE_ERRORS = apiErrorAnswer;
