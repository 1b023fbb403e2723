/**
 * The embedded DynamoDB-compatible store for local use and tests: dynalite on a loopback port, in
 * memory in this process; the LevelDB a persisted dynalite keeps its tables in; a client for a
 * local endpoint, and tables created in it until they are ACTIVE.
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  type CreateTableCommandInput,
} from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import { createRequire } from 'node:module';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface EmbeddedStore {
  endpoint: string;
  /** A persisted store's LevelDB faults so far (the local API's store process); an in-memory store has none. */
  faults?: string[];
  close(): Promise<void>;
}

/** dynalite in memory, in this process, on `port` of the loopback (0: any free port). */
export async function startInMemoryStore({ port = 0 }: { port?: number } = {}): Promise<EmbeddedStore> {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const { port: actual } = server.address() as AddressInfo;
  // A client's keep-alive connection (the AWS SDK's, whose pool outlives its requests) would keep
  // close() waiting for ever: once closing, each answer ends its connection and idle ones are closed.
  let closing = false;
  server.on('request', (_request: IncomingMessage, response: ServerResponse) => {
    response.once('finish', () => {
      if (closing) response.socket?.end();
    });
  });
  return {
    endpoint: `http://127.0.0.1:${actual}`,
    close: () =>
      new Promise<void>((resolve) => {
        closing = true;
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}

/** The LevelDB that dynalite persists with, as dynalite itself resolves it. */
export interface LevelDatabase {
  open(): Promise<void>;
  close(): Promise<void>;
}
type LevelConstructor = new (path: string, options: { createIfMissing: boolean }) => LevelDatabase;

/** A LevelDB handle on `path` (made if missing), with the Level that dynalite uses; open() opens it. */
export function openLevel(path: string): LevelDatabase {
  const require = createRequire(import.meta.url);
  const { Level } = createRequire(require.resolve('dynalite'))('level') as { Level: LevelConstructor };
  return new Level(path, { createIfMissing: true });
}

/**
 * Why the LevelDB folder `path` cannot be opened (a truncated CURRENT or MANIFEST, a lock another
 * process holds), or undefined when it can. dynalite opens its folder lazily and, when that fails,
 * throws `Database is closed` from a callback at the first request, uncatchable and without the cause.
 */
export async function storeFolderProblem(path: string): Promise<{ code: string; message: string } | undefined> {
  const db = openLevel(path);
  try {
    await db.open();
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return { code: cause?.code ?? 'UNKNOWN', message: cause?.message ?? String(error) };
  }
  await db.close();
  return undefined;
}

/**
 * A client of a local endpoint (dynalite, a stand-in), which takes any credentials: it never looks
 * for real ones.
 */
export const localDynamoClient = (endpoint: string): DynamoDBClient =>
  new DynamoDBClient({
    region: 'us-east-1',
    endpoint,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });

const ACTIVE_POLL_MS = 20;
const ACTIVE_ATTEMPTS = 250;

/** Creates a table unless it exists, then waits until it and its indexes are ACTIVE. */
export async function createTableUntilActive(client: DynamoDBClient, input: CreateTableCommandInput): Promise<void> {
  try {
    await client.send(new CreateTableCommand(input));
  } catch (error) {
    if ((error as { name?: string }).name !== 'ResourceInUseException') throw error;
  }
  for (let attempt = 0; attempt < ACTIVE_ATTEMPTS; attempt++) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: input.TableName }));
    const indexesActive = (Table?.GlobalSecondaryIndexes ?? []).every((index) => index.IndexStatus === 'ACTIVE');
    if (Table?.TableStatus === 'ACTIVE' && indexesActive) return;
    await new Promise((resolve) => setTimeout(resolve, ACTIVE_POLL_MS));
  }
  throw new Error(`Table ${input.TableName} did not become ACTIVE.`);
}
