/**
 * What the emulator reads of a function from the assembly rather than from the app: the entry its
 * construct recorded in the metadata (under the type the app names), and the file its handler loads.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { functionEntries, handlerFile, readStack, type CfnTemplate } from '../src/cloudAssembly.ts';

const template: CfnTemplate = {
  Resources: {
    ListFunction: {
      Type: 'AWS::Lambda::Function',
      Properties: { Handler: 'index.handler' },
      Metadata: { 'aws:cdk:path': 'Shop/Api/ListFunction/Resource' },
    },
    PlainFunction: {
      Type: 'AWS::Lambda::Function',
      Properties: { Handler: 'main.run' },
      Metadata: { 'aws:cdk:path': 'Shop/PlainFunction/Resource' },
    },
    Table: { Type: 'AWS::DynamoDB::Table', Metadata: { 'aws:cdk:path': 'Shop/Table/Resource' } },
  },
};

function assembly(metadataInline: boolean): string {
  const outdir = mkdtempSync(join(tmpdir(), 'entries-'));
  const metadata = {
    '/Shop/Api/ListFunction': [
      { type: 'aws:cdk:logicalId', data: 'ListFunction' },
      { type: 'shop:entry', data: 'src/list.ts' },
    ],
    '/Shop/Table': [{ type: 'shop:entry', data: 'not a function' }],
  };
  writeFileSync(join(outdir, 'Shop.template.json'), JSON.stringify(template));
  if (!metadataInline) writeFileSync(join(outdir, 'Shop.metadata.json'), JSON.stringify(metadata));
  writeFileSync(
    join(outdir, 'manifest.json'),
    JSON.stringify({
      version: '55.0.0',
      artifacts: {
        Shop: {
          type: 'aws:cloudformation:stack',
          properties: { templateFile: 'Shop.template.json' },
          ...(metadataInline ? { metadata } : { additionalMetadataFile: 'Shop.metadata.json' }),
        },
      },
    }),
  );
  return outdir;
}

describe('functionEntries', () => {
  it.each([
    ['in the manifest', true],
    ['in its additional metadata file', false],
  ])('reads each function entry recorded %s under the type given', (_where, inline) => {
    const stack = readStack(assembly(inline), 'Shop');
    expect([...functionEntries(stack, 'shop:entry')]).toEqual([['ListFunction', 'src/list.ts']]);
    expect([...functionEntries(stack, 'other:entry')]).toEqual([]);
  });
});

describe('handlerFile', () => {
  it("is the handler's module as a bundle writes it", () => {
    expect(handlerFile('index.handler')).toBe('index.js');
    expect(handlerFile('dist/main.run')).toBe('dist/main.js');
  });
});
