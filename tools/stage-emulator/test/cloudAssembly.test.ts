import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CloudAssemblyError, readStack, type CfnTemplate } from '../src/cloudAssembly.ts';

/** A cloud assembly laid out as `cdk synth` writes one: manifest, template, asset folders. */
const template: CfnTemplate = {
  Resources: {
    BundledFunction: {
      Type: 'AWS::Lambda::Function',
      Properties: { Handler: 'index.handler' },
      Metadata: { 'aws:asset:path': 'asset.bundled', 'aws:asset:is-bundled': true, 'aws:asset:property': 'Code' },
    },
    UnbundledFunction: { Type: 'AWS::Lambda::Function', Metadata: { 'aws:asset:path': 'asset.unbundled' } },
    VanishedFunction: { Type: 'AWS::Lambda::Function', Metadata: { 'aws:asset:path': 'asset.vanished' } },
    Table: { Type: 'AWS::DynamoDB::Table' },
  },
};

let outdir: string;

beforeAll(() => {
  outdir = mkdtempSync(join(tmpdir(), 'cloud-assembly-'));
  writeFileSync(
    join(outdir, 'manifest.json'),
    JSON.stringify({
      version: '55.0.0',
      artifacts: {
        'PetStore-staging.assets': { type: 'cdk:asset-manifest', properties: { file: 'PetStore-staging.assets.json' } },
        'PetStore-staging': {
          type: 'aws:cloudformation:stack',
          environment: 'aws://unknown-account/us-east-1',
          properties: { templateFile: 'PetStore-staging.template.json' },
          displayName: 'PetStore-staging',
        },
        'PetStore-production': {
          type: 'aws:cloudformation:stack',
          properties: { templateFile: 'PetStore-production.template.json' },
        },
        Tree: { type: 'cdk:tree', properties: { file: 'tree.json' } },
      },
    }),
  );
  writeFileSync(join(outdir, 'PetStore-staging.template.json'), JSON.stringify(template));
  mkdirSync(join(outdir, 'asset.bundled'));
  writeFileSync(join(outdir, 'asset.bundled', 'index.mjs'), 'export const handler = async () => ({});\n');
  mkdirSync(join(outdir, 'asset.unbundled'));
  writeFileSync(join(outdir, 'asset.unbundled', 'README.md'), 'not code\n');
});

afterAll(() => rmSync(outdir, { recursive: true, force: true }));

/** The CloudAssemblyError `run` throws; fails the test when it throws nothing or something else. */
function failure(run: () => unknown): CloudAssemblyError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(CloudAssemblyError);
    expect((error as Error).message).not.toContain('\n');
    return error as CloudAssemblyError;
  }
  throw new Error('expected a CloudAssemblyError');
}

describe('readStack', () => {
  it('reads a stack artifact: its template file, its template and its asset folders', () => {
    const stack = readStack(outdir, 'PetStore-staging');
    expect(stack.stackName).toBe('PetStore-staging');
    expect(stack.outdir).toBe(outdir);
    expect(stack.templateFile).toBe(join(outdir, 'PetStore-staging.template.json'));
    expect(stack.template).toEqual(template);
    expect(stack.assetDir('BundledFunction')).toBe(join(outdir, 'asset.bundled'));
  });

  it('uses a given template instead of the file (a test removing a grant from a copy)', () => {
    const copy: CfnTemplate = { Resources: { Table: { Type: 'AWS::DynamoDB::Table' } } };
    const stack = readStack(outdir, 'PetStore-staging', copy);
    expect(stack.template).toBe(copy);
    expect(stack.templateFile).toBe(join(outdir, 'PetStore-staging.template.json'));
  });

  it('refuses a missing outdir, naming it and what to run', () => {
    const missing = join(outdir, 'nope');
    expect(failure(() => readStack(missing, 'PetStore-staging')).message).toBe(
      `No cloud assembly at ${missing}: run \`npx cdk synth\` first (or pass its --output folder).`,
    );
  });

  it('refuses a folder without manifest.json', () => {
    const empty = mkdtempSync(join(tmpdir(), 'not-an-assembly-'));
    try {
      expect(failure(() => readStack(empty, 'PetStore-staging')).message).toMatch(
        /^No manifest\.json in .*not-an-assembly-/,
      );
    } finally {
      rmSync(empty, { recursive: true });
    }
  });

  it('refuses an unknown stack, listing the stacks that are there (not the other artifacts)', () => {
    expect(failure(() => readStack(outdir, 'PetStore-dev')).message).toBe(
      `No stack PetStore-dev in ${outdir} (stacks there: PetStore-staging, PetStore-production).`,
    );
  });

  it('refuses a stack whose template file is missing', () => {
    expect(failure(() => readStack(outdir, 'PetStore-production')).message).toMatch(
      /template of PetStore-production is missing/,
    );
  });

  it('refuses an asset folder that is missing, an asset that is not bundled, and a resource without asset', () => {
    const stack = readStack(outdir, 'PetStore-staging');
    expect(failure(() => stack.assetDir('VanishedFunction')).message).toMatch(
      /asset folder of VanishedFunction is missing: .*asset\.vanished/,
    );
    expect(failure(() => stack.assetDir('UnbundledFunction')).message).toMatch(
      /asset of UnbundledFunction is not bundled \(no index\.js or index\.mjs in /,
    );
    expect(failure(() => stack.assetDir('Table')).message).toMatch(/Table of PetStore-staging has no asset/);
    expect(failure(() => stack.assetDir('Nothing')).message).toBe('No resource Nothing in stack PetStore-staging.');
  });

  it('refuses a manifest that is not JSON in one line', () => {
    const broken = mkdtempSync(join(tmpdir(), 'broken-assembly-'));
    try {
      writeFileSync(join(broken, 'manifest.json'), '{ "artifacts": ');
      expect(failure(() => readStack(broken, 'PetStore-staging')).message).toMatch(/manifest\.json is not valid JSON/);
    } finally {
      rmSync(broken, { recursive: true });
    }
  });
});
