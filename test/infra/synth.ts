/**
 * Infra test support: the app exactly as infra/app.ts builds it (same stacks, same cdk.json
 * context), environment-agnostic, and by default without bundling: with `aws:cdk:bundling-stacks`
 * set to [] CDK skips esbuild and gives each function a placeholder asset, so only the one test
 * that needs real bundles pays for them.
 */
import { App, Stack, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../infra/bundle/bundling.ts';
import type { PetStoreAccountStack } from '../../infra/accountStack.ts';
import { addAccountStack, addNagChecks, addPetStoreStacks } from '../../infra/stacks.ts';
import type { PetStoreStack } from '../../infra/stack.ts';
import { STAGE_SETTINGS, STAGES, type Stage, type StageSettings } from '../../infra/stages.ts';

/** The context `cdk synth` runs with: cdk.json's feature flags. */
export const cdkJsonContext = (): Record<string, unknown> =>
  (JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> }).context;

export interface TestAppOptions {
  /** Stacks to bundle for real (construct paths, e.g. 'PetStore-staging'); none by default. */
  bundle?: string[];
  stages?: readonly Stage[];
  outdir?: string;
  /** Register cdk-nag as infra/app.ts does. */
  nag?: boolean;
  /** Settings that differ from infra/stages.ts, by stage (to test a setting's other value). */
  settings?: Partial<Record<Stage, Partial<StageSettings>>>;
}

export interface TestApp {
  app: App;
  stacks: Map<Stage, PetStoreStack>;
  /** The account stack every stage stack depends on. */
  account: PetStoreAccountStack;
}

export function testApp({
  bundle = [],
  stages = STAGES,
  outdir,
  nag = false,
  settings = {},
}: TestAppOptions = {}): TestApp {
  const app = new App({
    ...(outdir ? { outdir } : {}),
    context: {
      ...cdkJsonContext(),
      'aws:cdk:bundling-stacks': bundle,
      // What the CLI sets, so the template carries the asset paths SAM reads.
      'aws:cdk:enable-asset-metadata': true,
    },
  });
  const account = addAccountStack(app, {});
  const stacks = addPetStoreStacks(app, stages, {}, account, (stage) => ({
    ...STAGE_SETTINGS[stage],
    ...settings[stage],
  }));
  if (nag) addNagChecks(app);
  return { app, stacks, account };
}

export type Resources = Record<string, { Type: string; Properties?: Record<string, unknown>; [key: string]: unknown }>;

export interface SynthesizedStack {
  stack: PetStoreStack;
  template: Template;
  json: { Resources: Resources; Outputs?: Record<string, { Value: unknown }>; [key: string]: unknown };
  /** The logical id of a construct's CloudFormation resource (its default child). */
  logicalId(construct: { node: { defaultChild?: unknown } }): string;
  resource(logicalId: string): Resources[string];
  ofType(type: string): [string, Resources[string]][];
}

export function synthesize(stack: PetStoreStack): SynthesizedStack {
  const template = Template.fromStack(stack);
  const json = template.toJSON() as SynthesizedStack['json'];
  const resource = (logicalId: string) => {
    const found = json.Resources[logicalId];
    if (!found) throw new Error(`no resource ${logicalId} in ${stack.stackName}`);
    return found;
  };
  return {
    stack,
    template,
    json,
    logicalId: (construct) => Stack.of(stack).getLogicalId(construct.node.defaultChild as CfnElement),
    resource,
    ofType: (type) => Object.entries(json.Resources).filter(([, r]) => r.Type === type),
  };
}
