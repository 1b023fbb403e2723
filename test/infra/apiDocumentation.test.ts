/** Each stage's API Gateway documentation: the document's prose, versioned by its digest, tied to the stage. */
import { Match } from 'aws-cdk-lib/assertions';
import { expect, it } from 'vitest';
import { documentationVersionName } from '../../infra/apiDocumentation.ts';
import { openApiDocument } from '../../contract/openapi.ts';
import { synthesize, testApp } from './synth.ts';

it('publishes a documentation version of openapi.json and ties each stage to it', () => {
  const version = documentationVersionName();
  expect(version).toMatch(/^1\.0\.0-[0-9a-f]{12}$/);
  const doc = openApiDocument() as { paths: Record<string, Record<string, { responses: object }>> };
  const responses = Object.values(doc.paths)
    .flatMap((item) => Object.values(item))
    .reduce((n, op) => n + Object.keys(op.responses).length, 0);
  for (const stack of testApp().stacks.values()) {
    const s = synthesize(stack);
    s.template.hasResourceProperties('AWS::ApiGateway::DocumentationVersion', { DocumentationVersion: version });
    s.template.hasResourceProperties('AWS::ApiGateway::Stage', {
      StageName: 'v1',
      DocumentationVersion: Match.anyValue(),
    });
    s.template.hasResourceProperties('AWS::ApiGateway::DocumentationPart', {
      Location: { Type: 'API' },
      Properties: Match.stringLikeRegexp('Pet Store Inventory'),
    });
    s.template.hasResourceProperties('AWS::ApiGateway::DocumentationPart', {
      Location: { Type: 'RESPONSE', Path: '/pets/{petId}', Method: 'GET', StatusCode: '410' },
    });
    // 3 METHOD parts (the stack's), 1 API part, one RESPONSE part per declared status.
    s.template.resourceCountIs('AWS::ApiGateway::DocumentationPart', 3 + 1 + responses);
    const versionId = s.ofType('AWS::ApiGateway::DocumentationVersion')[0]![0];
    const [, stageResource] = s.ofType('AWS::ApiGateway::Stage')[0]!;
    expect(stageResource.DependsOn).toContain(versionId);
  }
});
