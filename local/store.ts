/**
 * The embedded DynamoDB-compatible store for local use and tests: dynalite, in this process,
 * on a loopback port, persisting under a folder or in memory only.
 */
import { CreateTableCommand, DescribeTableCommand, type CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import type { AddressInfo } from 'node:net';
import { createDynamoClient } from '../lib/store/dynamo.ts';
import { createControlTableInput, createTableInput } from '../lib/store/table.ts';

export interface EmbeddedStore {
  endpoint: string;
  close(): Promise<void>;
}

export interface EmbeddedStoreOptions {
  /** LevelDB folder; in memory when unset. */
  path?: string | undefined;
  port?: number;
}

export async function startEmbeddedStore({ path, port = 0 }: EmbeddedStoreOptions = {}): Promise<EmbeddedStore> {
  const server = dynalite({ ...(path ? { path } : {}), createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const { port: actual } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${actual}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Creates the pets table and its status index from the shared definition, unless it exists. */
export const ensurePetsTable = (endpoint: string, tableName: string): Promise<void> =>
  ensureTable(endpoint, createTableInput(tableName));

/** Creates the control table (idempotency records, keys, secrets) unless it exists. */
export const ensureControlTable = (endpoint: string, tableName: string): Promise<void> =>
  ensureTable(endpoint, createControlTableInput(tableName));

async function ensureTable(endpoint: string, input: CreateTableCommandInput): Promise<void> {
  const client = createDynamoClient({ endpoint });
  try {
    await client.send(new CreateTableCommand(input));
  } catch (error) {
    if ((error as { name?: string }).name !== 'ResourceInUseException') throw error;
  }
  for (let i = 0; i < 100; i++) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: input.TableName }));
    if (Table?.TableStatus === 'ACTIVE') break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  client.destroy();
}
