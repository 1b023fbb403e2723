/** createPet's access to its idempotency records, and nobody else's. */
import { describe, expect, it } from 'vitest';
import type { OperationName } from '../../lib/routes.ts';
import { synthesize, testApp, type SynthesizedStack } from './synth.ts';

const { stacks } = testApp({ stages: ['staging'] });
const synthesized: SynthesizedStack = synthesize(stacks.get('staging')!);
const { stack, json, logicalId } = synthesized;

type Statement = { Sid?: string; Action: string | string[]; Resource: unknown; Condition?: unknown };

/** Every statement of a function's role, inline policies and attached ones alike. */
function statementsOf(operation: OperationName): Statement[] {
  const fn = stack.functions.get(operation)!;
  const roleId = logicalId(fn.role as never);
  const statements: Statement[] = [];
  for (const resource of Object.values(json.Resources)) {
    const props = resource.Properties as Record<string, any> | undefined;
    if (resource.Type === 'AWS::IAM::Role' && resource === json.Resources[roleId]) {
      for (const policy of props?.Policies ?? []) statements.push(...policy.PolicyDocument.Statement);
    }
    if (resource.Type === 'AWS::IAM::Policy' && JSON.stringify(props?.Roles).includes(roleId)) {
      statements.push(...props?.PolicyDocument.Statement);
    }
  }
  return statements;
}

const controlTableArn = { 'Fn::GetAtt': [logicalId(stack.controlTable), 'Arn'] };
const touchesControlTable = (s: Statement) => JSON.stringify(s.Resource).includes(logicalId(stack.controlTable));

describe('idempotency records in the control table', () => {
  it('lets createPet get, put and update items whose key starts with idempotency#, and nothing more', () => {
    const statements = statementsOf('createPet').filter(touchesControlTable);
    expect(statements).toEqual([
      {
        Sid: 'IdempotencyRecords',
        Effect: 'Allow',
        Action: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
        Resource: controlTableArn,
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['idempotency#*'] } },
      },
    ]);
  });

  it('gives createPet the control table name', () => {
    const fn = json.Resources[logicalId(stack.functions.get('createPet')!)];
    expect((fn?.Properties as any).Environment.Variables.CONTROL_TABLE_NAME).toEqual({ Ref: logicalId(stack.controlTable) });
  });

  it.each(['listPets', 'getPet'] as const)('gives %s no access to the control table', (operation) => {
    expect(statementsOf(operation).filter(touchesControlTable)).toEqual([]);
  });
});
