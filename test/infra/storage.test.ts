/** The pets and control tables (infra/constructs/storage.ts), in both stages. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../infra/bundle/bundling.ts';
import { STAGES, STAGE_SETTINGS } from '../../infra/stages.ts';
import { STATUS_INDEX_SHARDS_VARIABLE, controlTable, petsTable } from '../../lib/store/table.ts';
import { props, ref, synthesizedStages } from './templates.ts';

const of = synthesizedStages();

describe.each(STAGES)('PetStore-%s storage', (stage) => {
  const production = stage === 'production';

  describe('table', () => {
    it('is the shared definition from lib/store/table.ts', () => {
      const { partitionKey, statusIndex } = petsTable;
      of(stage).template.resourceCountIs('AWS::DynamoDB::Table', 2);
      of(stage).template.hasResourceProperties('AWS::DynamoDB::Table', {
        KeySchema: [{ AttributeName: partitionKey.name, KeyType: 'HASH' }],
        AttributeDefinitions: Match.arrayWith([
          { AttributeName: partitionKey.name, AttributeType: partitionKey.type },
          { AttributeName: statusIndex.partitionKey.name, AttributeType: statusIndex.partitionKey.type },
        ]),
        GlobalSecondaryIndexes: [
          {
            IndexName: statusIndex.indexName,
            KeySchema: [
              { AttributeName: statusIndex.partitionKey.name, KeyType: 'HASH' },
              { AttributeName: statusIndex.sortKey.name, KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType: statusIndex.projection },
          },
        ],
      });
      const table = of(stage).resource(of(stage).logicalId(of(stage).stack.table));
      expect((props(table).AttributeDefinitions as unknown[]).length).toBe(2);
    });

    it('projects ALL into the status index, as docs/performance.md decides after weighing INCLUDE', () => {
      const table = of(stage).resource(of(stage).logicalId(of(stage).stack.table));
      expect(props(table).GlobalSecondaryIndexes).toEqual([
        expect.objectContaining({ IndexName: petsTable.statusIndex.indexName, Projection: { ProjectionType: 'ALL' } }),
      ]);
      const performance = readFileSync(join(PROJECT_ROOT, 'docs', 'performance.md'), 'utf8');
      expect(performance).toContain('**Its projection: `ALL`, kept.**');
    });

    it('is on-demand, with point-in-time recovery and encryption at rest', () => {
      of(stage).template.hasResourceProperties('AWS::DynamoDB::Table', {
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        SSESpecification: { SSEEnabled: true },
      });
    });

    it('has a control table: string keys, TTL, on-demand, PITR, encrypted, protected like the pets table', () => {
      const s = of(stage);
      const control = s.resource(s.logicalId(s.stack.controlTable));
      expect(props(control)).toMatchObject({
        KeySchema: [
          { AttributeName: controlTable.partitionKey.name, KeyType: 'HASH' },
          { AttributeName: controlTable.sortKey.name, KeyType: 'RANGE' },
        ],
        TimeToLiveSpecification: { AttributeName: controlTable.timeToLiveAttribute, Enabled: true },
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        SSESpecification: { SSEEnabled: true },
        DeletionProtectionEnabled: production,
      });
      expect(control.DeletionPolicy).toBe(production ? 'Retain' : 'Delete');
      // CloudFormation names both tables: a fixed name would collide, on a redeploy after a destroy,
      // with the table production retains. `npm run keys` reads the ControlTableName output.
      expect(props(control)).not.toHaveProperty('TableName');
      expect(props(s.resource(s.logicalId(s.stack.table)))).not.toHaveProperty('TableName');
      expect(s.json.Outputs?.ControlTableName?.Value).toEqual(ref(s.logicalId(s.stack.controlTable)));
    });

    it(production ? 'is protected and retained' : 'can be destroyed', () => {
      of(stage).template.hasResource('AWS::DynamoDB::Table', {
        DeletionPolicy: production ? 'Retain' : 'Delete',
        UpdateReplacePolicy: production ? 'Retain' : 'Delete',
        Properties: Match.objectLike({ DeletionProtectionEnabled: production }),
      });
      expect(of(stage).stack.terminationProtection).toBe(production);
    });
  });

  describe('status index shards', () => {
    const settings = STAGE_SETTINGS[stage];

    it('is keyed on the status shard, sorted by id', () => {
      expect(petsTable.statusIndex.partitionKey).toEqual({ name: 'statusShard', type: 'S' });
      expect(petsTable.statusIndex.sortKey).toEqual({ name: 'id', type: 'N' });
    });

    it("keeps one status's creates at the stage's burst under half of a partition's 1,000 writes a second per shard", () => {
      expect(Number.isInteger(settings.statusIndexShards) && settings.statusIndexShards >= 1).toBe(true);
      // Each create is one write unit in the index (an item under 1 KB).
      expect(settings.throttling.burstLimit / settings.statusIndexShards).toBeLessThanOrEqual(500);
      // A power of two (the functions refuse any other count at their cold start: lib/service.ts).
      expect(Number.isInteger(Math.log2(settings.statusIndexShards))).toBe(true);
    });

    it('gives every function the stage count, so createPet writes and listPets reads the same shards', () => {
      const variablesOf = (fn: Parameters<typeof props>[0]) =>
        (props(fn).Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
      const routeFunctions = Object.values(of(stage).json.Resources ?? {})
        .filter((resource) => resource.Type === 'AWS::Lambda::Function')
        .map(variablesOf)
        .filter((variables) => 'TABLE_NAME' in variables);
      expect(routeFunctions).toHaveLength(3);
      for (const variables of routeFunctions) {
        expect(variables[STATUS_INDEX_SHARDS_VARIABLE]).toBe(String(settings.statusIndexShards));
      }
    });
  });

  it('has no Secrets Manager secret: the cursor secret lives in the control table', () => {
    of(stage).template.resourceCountIs('AWS::SecretsManager::Secret', 0);
  });
});
