/**
 * The local API's store: the kit's in-memory dynalite, or one persisting under a folder in a process
 * of its own (./storeProcess.ts); and the service's tables created in it from their shared definitions.
 */
import { DescribeTableCommand, type CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import { createTableUntilActive, startInMemoryStore, type EmbeddedStore } from '@petstore/local-kit/store';
import { createDynamoClient } from '../lib/store/dynamo.ts';
import { createControlTableInput, createTableInput } from '../lib/store/table.ts';
import { startStoreProcess } from './storeProcess.ts';

export type { EmbeddedStore } from '@petstore/local-kit/store';

export interface EmbeddedStoreOptions {
  /** LevelDB folder, served by a process of its own (./storeProcess.ts); in memory, in this process, when unset. */
  path?: string | undefined;
  port?: number;
  /** For a persisted store: called at each LevelDB fault (`first` unless the same came before). */
  onFault?: (message: string, first: boolean) => void;
  /** For a persisted store: called once when its folder is deleted or replaced while it serves. */
  onGone?: () => void;
}

export async function startEmbeddedStore({
  path,
  port = 0,
  onFault,
  onGone,
}: EmbeddedStoreOptions = {}): Promise<EmbeddedStore> {
  if (path) return startStoreProcess(path, { port, ...(onFault ? { onFault } : {}), ...(onGone ? { onGone } : {}) });
  return startInMemoryStore({ port });
}

/**
 * Creates the pets table and its status index from the shared definition, unless it exists. A
 * table kept from before the index was sharded (keyed on `status`) is refused in one line: its
 * pets carry no shard key, so no status listing would find them.
 */
export async function ensurePetsTable(endpoint: string, tableName: string): Promise<void> {
  const input = createTableInput(tableName);
  await ensureTable(endpoint, input);
  const client = createDynamoClient({ endpoint });
  try {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    const wanted = JSON.stringify(
      input.GlobalSecondaryIndexes.map(({ IndexName, KeySchema }) => ({ IndexName, KeySchema })),
    );
    const found = JSON.stringify(
      (Table?.GlobalSecondaryIndexes ?? []).map(({ IndexName, KeySchema }) => ({ IndexName, KeySchema })),
    );
    if (found !== wanted) {
      throw new Error(
        `Table '${tableName}' at ${endpoint} has another status index than this version defines (${found}); ` +
          'delete its data (e.g. .data/) or use another TABLE_NAME.',
      );
    }
  } finally {
    client.destroy();
  }
}

/** Creates the control table (idempotency records, keys, secrets) unless it exists. */
export const ensureControlTable = (endpoint: string, tableName: string): Promise<void> =>
  ensureTable(endpoint, createControlTableInput(tableName));

async function ensureTable(endpoint: string, input: CreateTableCommandInput): Promise<void> {
  const client = createDynamoClient({ endpoint });
  try {
    await createTableUntilActive(client, input);
  } finally {
    client.destroy();
  }
}
