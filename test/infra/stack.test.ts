/**
 * The composed stacks (infra/stack.ts): outputs, and the two stages kept apart. Each concern has its
 * own test file (storage, functions, restApi, monitoring, deployment); none bundles (see synth.ts).
 */
import { describe, expect, it } from 'vitest';
import { STAGES, stackName } from '../../infra/stages.ts';
import { props, ref, render, synthesizedStages } from './templates.ts';

const of = synthesizedStages();

describe.each(STAGES)('PetStore-%s stack', (stage) => {
  it('outputs the API URL (ending in /v1/) and the table name', () => {
    const s = of(stage);
    const outputs = s.json.Outputs ?? {};
    const [stageId, apiStage] = s.ofType('AWS::ApiGateway::Stage')[0]!;
    const tableId = s.logicalId(s.stack.table);
    const url = render(outputs.ApiUrl!.Value, { [stageId]: String(props(apiStage).StageName) });
    expect(url).toMatch(/^https:\/\/<\w+>\.execute-api\.<AWS::Region>\.<AWS::URLSuffix>\/v1\/$/);
    expect(outputs.TableName!.Value).toEqual(ref(tableId));
    for (const output of Object.values(outputs)) expect(output).not.toHaveProperty('Export');
  });
});

describe('the two stages', () => {
  it('are two self-contained stacks: staging never references production', () => {
    expect(STAGES.map((stage) => of(stage).stack.stackName)).toEqual(['PetStore-staging', 'PetStore-production']);
    expect(STAGES.map(stackName)).toEqual(['PetStore-staging', 'PetStore-production']);
    for (const stage of STAGES) {
      const text = JSON.stringify(of(stage).json);
      expect(text).not.toContain('Fn::ImportValue');
      const other = stage === 'staging' ? 'production' : 'staging';
      expect(text).not.toContain(`/petstore/${other}/`);
      expect(text).not.toContain(stackName(other));
    }
  });
});
