import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CfnTemplate } from '../../tools/stage-emulator/src/cloudAssembly.ts';
import { TemplateResolver } from '../../tools/stage-emulator/src/intrinsics.ts';
import { createTablesFromTemplate } from '../../tools/stage-emulator/src/tables.ts';
import { startEmbeddedStore, type EmbeddedStore } from '../../local/embeddedStore.ts';
import { createDynamoClient } from '../../lib/store/dynamo.ts';
import { synthesize, testApp } from '../infra/synth.ts';

let stagingTemplate: CfnTemplate;
let store: EmbeddedStore;
let client: DynamoDBClient;

beforeAll(async () => {
  const { stacks } = testApp({ stages: ['staging'] });
  stagingTemplate = synthesize(stacks.get('staging')!).json as unknown as CfnTemplate;
  store = await startEmbeddedStore();
  client = createDynamoClient({ endpoint: store.endpoint });
});
afterAll(async () => {
  client?.destroy();
  await store?.close();
});

const describeTable = async (name: string) => (await client.send(new DescribeTableCommand({ TableName: name }))).Table!;
const logicalIdOf = (template: CfnTemplate, prefix: string) =>
  Object.keys(template.Resources).find((id) => id.startsWith(prefix))!;

describe('createTablesFromTemplate', () => {
  it("creates the staging stack's tables as the template defines them, ACTIVE, and returns their keys", async () => {
    const resolver = new TemplateResolver({ stackName: 'PetStore-staging', template: stagingTemplate });
    const tables = await createTablesFromTemplate(store.endpoint, stagingTemplate, resolver);
    const petsName = `PetStore-staging-${logicalIdOf(stagingTemplate, 'PetsTable')}`;
    expect(tables).toEqual([
      {
        logicalId: logicalIdOf(stagingTemplate, 'PetsTable'),
        tableName: petsName,
        partitionKey: 'id',
        indexes: [{ indexName: 'status-index', partitionKey: 'statusShard', sortKey: 'id' }],
      },
      {
        logicalId: logicalIdOf(stagingTemplate, 'ControlTable'),
        tableName: `PetStore-staging-${logicalIdOf(stagingTemplate, 'ControlTable')}`,
        partitionKey: 'pk',
        sortKey: 'sk',
        indexes: [],
        // dynalite has no UpdateTimeToLive: recorded, reported, not applied.
        timeToLive: { attributeName: 'expiresAt', applied: false },
      },
    ]);

    const pets = await describeTable(petsName);
    const petsDefinition = stagingTemplate.Resources[logicalIdOf(stagingTemplate, 'PetsTable')]!.Properties!;
    expect(pets.TableStatus).toBe('ACTIVE');
    expect(pets.KeySchema).toEqual(petsDefinition.KeySchema);
    expect(pets.AttributeDefinitions).toEqual(expect.arrayContaining(petsDefinition.AttributeDefinitions as object[]));
    expect(pets.BillingModeSummary?.BillingMode).toBe('PAY_PER_REQUEST');
    expect(
      pets.GlobalSecondaryIndexes?.map(({ IndexName, KeySchema, Projection, IndexStatus }) => ({
        IndexName,
        KeySchema,
        Projection,
        IndexStatus,
      })),
    ).toEqual([
      {
        IndexName: 'status-index',
        KeySchema: [
          { AttributeName: 'statusShard', KeyType: 'HASH' },
          { AttributeName: 'id', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
        IndexStatus: 'ACTIVE',
      },
    ]);
    const control = await describeTable(`PetStore-staging-${logicalIdOf(stagingTemplate, 'ControlTable')}`);
    expect(control.KeySchema).toEqual([
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ]);

    // A second start over the same store finds the tables there.
    expect(await createTablesFromTemplate(store.endpoint, stagingTemplate, resolver)).toEqual(tables);
  });

  it('follows the template, not lib/store/table.ts: a template without the status index gives a table without it', async () => {
    const drifted = structuredClone(stagingTemplate);
    const pets = drifted.Resources[logicalIdOf(drifted, 'PetsTable')]!.Properties!;
    delete pets.GlobalSecondaryIndexes;
    pets.AttributeDefinitions = [{ AttributeName: 'id', AttributeType: 'N' }];
    const resolver = new TemplateResolver({ stackName: 'PetStore-drifted', template: drifted });
    const tables = await createTablesFromTemplate(store.endpoint, drifted, resolver);
    const created = tables.find((table) => table.tableName.startsWith('PetStore-drifted-PetsTable'))!;
    expect(created.indexes).toEqual([]);
    expect((await describeTable(created.tableName)).GlobalSecondaryIndexes).toBeUndefined();
  });

  it('creates local secondary indexes, provisioned capacity and index projections', async () => {
    const template: CfnTemplate = {
      Resources: {
        Orders: {
          Type: 'AWS::DynamoDB::Table',
          Properties: {
            TableName: { 'Fn::Sub': '${AWS::StackName}-orders' },
            AttributeDefinitions: [
              { AttributeName: 'customer', AttributeType: 'S' },
              { AttributeName: 'order', AttributeType: 'S' },
              { AttributeName: 'placedAt', AttributeType: 'N' },
            ],
            KeySchema: [
              { AttributeName: 'customer', KeyType: 'HASH' },
              { AttributeName: 'order', KeyType: 'RANGE' },
            ],
            ProvisionedThroughput: { ReadCapacityUnits: 2, WriteCapacityUnits: 3 },
            LocalSecondaryIndexes: [
              {
                IndexName: 'by-date',
                KeySchema: [
                  { AttributeName: 'customer', KeyType: 'HASH' },
                  { AttributeName: 'placedAt', KeyType: 'RANGE' },
                ],
                Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['total'] },
              },
            ],
          },
        },
      },
    };
    const tables = await createTablesFromTemplate(
      store.endpoint,
      template,
      new TemplateResolver({ stackName: 'Shop', template }),
    );
    expect(tables).toEqual([
      {
        logicalId: 'Orders',
        tableName: 'Shop-orders',
        partitionKey: 'customer',
        sortKey: 'order',
        indexes: [{ indexName: 'by-date', partitionKey: 'customer', sortKey: 'placedAt' }],
      },
    ]);
    const orders = await describeTable('Shop-orders');
    expect(orders.ProvisionedThroughput).toMatchObject({ ReadCapacityUnits: 2, WriteCapacityUnits: 3 });
    expect(orders.LocalSecondaryIndexes?.[0]).toMatchObject({
      IndexName: 'by-date',
      Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['total'] },
    });
  });

  it('refuses a table the store rejects, naming it', async () => {
    const template: CfnTemplate = {
      Resources: {
        Broken: {
          Type: 'AWS::DynamoDB::Table',
          Properties: { TableName: 'broken', AttributeDefinitions: [], KeySchema: [] },
        },
      },
    };
    await expect(
      createTablesFromTemplate(store.endpoint, template, new TemplateResolver({ stackName: 'S', template })),
    ).rejects.toThrow(/^Cannot create table broken: /);
  });
});
