/**
 * Creates a template's DynamoDB tables in a DynamoDB-compatible endpoint (dynalite) from the
 * template's own definitions, never from the service's code: what runs offline is what would be
 * deployed, so a drift between the code's idea of a table and the stack's shows here.
 */
import { UpdateTimeToLiveCommand, type CreateTableCommandInput, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createTableUntilActive, localDynamoClient } from '@petstore/local-kit/store';
import { CloudAssemblyError, type CfnTemplate } from './cloudAssembly.ts';
import type { TemplateResolver } from './intrinsics.ts';

interface IndexKeys {
  indexName: string;
  partitionKey: string;
  sortKey?: string;
}

export interface TableKeys {
  tableName: string;
  partitionKey: string;
  sortKey?: string;
  indexes: IndexKeys[];
  /** The template's TimeToLiveSpecification, and whether the endpoint took it (dynalite has no UpdateTimeToLive). */
  timeToLive?: { attributeName: string; applied: boolean };
  /** The template's logical id of the table. */
  logicalId: string;
}

interface KeySchemaElement {
  AttributeName: string;
  KeyType: 'HASH' | 'RANGE';
}

export async function createTablesFromTemplate(
  endpoint: string,
  template: CfnTemplate,
  resolver: TemplateResolver,
): Promise<TableKeys[]> {
  const client = localDynamoClient(endpoint);
  try {
    const tables: TableKeys[] = [];
    for (const [logicalId, resource] of Object.entries(template.Resources)) {
      if (resource.Type !== 'AWS::DynamoDB::Table') continue;
      const properties = (resolver.resolve(resource.Properties ?? {}) ?? {}) as Record<string, unknown>;
      const input = createTableInput(resolver.ref(logicalId), properties);
      await createTable(client, input);
      const timeToLive = await applyTimeToLive(client, input.TableName!, properties.TimeToLiveSpecification);
      tables.push({ ...tableKeys(logicalId, input), ...(timeToLive ? { timeToLive } : {}) });
    }
    return tables;
  } finally {
    client.destroy();
  }
}

/** The CreateTable request the template's properties describe (what CloudFormation would send). */
function createTableInput(tableName: string, properties: Record<string, unknown>): CreateTableCommandInput {
  const billingMode = (properties.BillingMode as CreateTableCommandInput['BillingMode']) ?? 'PROVISIONED';
  const index = (definition: Record<string, unknown>) => ({
    IndexName: definition.IndexName as string,
    KeySchema: definition.KeySchema as KeySchemaElement[],
    Projection: definition.Projection as Record<string, unknown>,
    ...(billingMode === 'PROVISIONED' && definition.ProvisionedThroughput
      ? { ProvisionedThroughput: throughput(definition.ProvisionedThroughput) }
      : {}),
  });
  const globalIndexes = (properties.GlobalSecondaryIndexes as Record<string, unknown>[] | undefined) ?? [];
  const localIndexes = (properties.LocalSecondaryIndexes as Record<string, unknown>[] | undefined) ?? [];
  return {
    TableName: tableName,
    AttributeDefinitions: properties.AttributeDefinitions as CreateTableCommandInput['AttributeDefinitions'],
    KeySchema: properties.KeySchema as KeySchemaElement[],
    BillingMode: billingMode,
    ...(billingMode === 'PROVISIONED'
      ? {
          ProvisionedThroughput: throughput(
            properties.ProvisionedThroughput ?? { ReadCapacityUnits: 5, WriteCapacityUnits: 5 },
          ),
        }
      : {}),
    ...(globalIndexes.length ? { GlobalSecondaryIndexes: globalIndexes.map(index) } : {}),
    ...(localIndexes.length ? { LocalSecondaryIndexes: localIndexes.map(index) } : {}),
    ...(properties.StreamSpecification
      ? { StreamSpecification: { StreamEnabled: true, ...(properties.StreamSpecification as object) } }
      : {}),
  } as CreateTableCommandInput;
}

function throughput(value: unknown) {
  const { ReadCapacityUnits, WriteCapacityUnits } = value as Record<string, unknown>;
  return { ReadCapacityUnits: Number(ReadCapacityUnits), WriteCapacityUnits: Number(WriteCapacityUnits) };
}

function keysOf(schema: KeySchemaElement[] | undefined, owner: string): { partitionKey: string; sortKey?: string } {
  const partitionKey = schema?.find((key) => key.KeyType === 'HASH')?.AttributeName;
  if (!partitionKey) throw new CloudAssemblyError(`${owner} has no HASH key in its KeySchema.`);
  const sortKey = schema?.find((key) => key.KeyType === 'RANGE')?.AttributeName;
  return { partitionKey, ...(sortKey ? { sortKey } : {}) };
}

function tableKeys(logicalId: string, input: CreateTableCommandInput): TableKeys {
  const indexes = [...(input.GlobalSecondaryIndexes ?? []), ...(input.LocalSecondaryIndexes ?? [])].map((index) => ({
    indexName: index.IndexName!,
    ...keysOf(index.KeySchema as KeySchemaElement[], `Index ${index.IndexName} of ${logicalId}`),
  }));
  return {
    tableName: input.TableName!,
    logicalId,
    ...keysOf(input.KeySchema as KeySchemaElement[], `Table ${logicalId}`),
    indexes,
  };
}

/** The shared create-and-wait (tools/local-kit/src/store.ts), its failures told as the runner's one-line errors. */
async function createTable(client: DynamoDBClient, input: CreateTableCommandInput): Promise<void> {
  try {
    await createTableUntilActive(client, input);
  } catch (error) {
    throw new CloudAssemblyError(`Cannot create table ${input.TableName}: ${(error as Error).message}`);
  }
}

/** Applies a TimeToLiveSpecification where the endpoint supports it; reports it either way. */
async function applyTimeToLive(
  client: DynamoDBClient,
  tableName: string,
  specification: unknown,
): Promise<TableKeys['timeToLive']> {
  const { AttributeName, Enabled } = (specification ?? {}) as { AttributeName?: string; Enabled?: boolean | string };
  if (!AttributeName || !(Enabled === true || Enabled === 'true')) return undefined;
  try {
    await client.send(
      new UpdateTimeToLiveCommand({ TableName: tableName, TimeToLiveSpecification: { AttributeName, Enabled: true } }),
    );
    return { attributeName: AttributeName, applied: true };
  } catch (error) {
    // dynalite has no UpdateTimeToLive: expired items stay (the service's readers check expiry themselves).
    if ((error as { name?: string }).name === 'UnknownOperationException')
      return { attributeName: AttributeName, applied: false };
    throw error;
  }
}
