/**
 * Warm: each handler in-process on dynalite, interleaved request by request with the raw DynamoDB
 * call it makes, keys and cursor secret read from the control table as deployed.
 */
import { GetCommand, PutCommand, ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { openSync, writeSync } from 'node:fs';
import { createHandler as createPetHandler } from '../../functions/createPet.ts';
import { createHandler as getPetHandler } from '../../functions/getPet.ts';
import { createHandler as listPetsHandler } from '../../functions/listPets.ts';
import { setRequestLogWriter } from '../../lib/http/requestLog.ts';
import { dependenciesFromEnvironment, type Dependencies } from '../../lib/service.ts';
import { shareOf, statusShardQuery } from '../../lib/store/petPages.ts';
import { shardCountOf, statusShardsOf } from '../../lib/store/table.ts';
import { localContext } from '@petstore/local-kit/proxyEvent';
import { ensureControlTable, ensurePetsTable, startEmbeddedStore } from '../../local/embeddedStore.ts';
import { ms, table, times } from './print.ts';
import { apiEvent, benchKeyItem } from './requests.ts';
import { percentile } from './stats.ts';

export interface WarmRow {
  case: string;
  rawP50: number;
  handlerP50: number;
  p50Ratio: number;
  rawP99: number;
  handlerP99: number;
  p99Ratio: number;
}

/** Prepares request `i` (untimed) and returns the call to time. */
type Call = (i: number) => () => Promise<unknown>;

/** One case: its name, the raw DynamoDB call, and the handler's request that makes it. */
type WarmCase = [string, Call, Call];

interface WarmService {
  service: Dependencies;
  documents: DynamoDBDocumentClient;
  tableName: string;
  close(): Promise<void>;
}

/** The service as deployed, on dynalite: no key or secret in the environment; both come from the control table. */
async function warmService(): Promise<WarmService> {
  const store = await startEmbeddedStore();
  const env = {
    TABLE_NAME: 'bench',
    CONTROL_TABLE_NAME: 'bench-control',
    DYNAMODB_ENDPOINT: store.endpoint,
    AWS_REGION: 'us-east-1',
  };
  await ensurePetsTable(store.endpoint, env.TABLE_NAME);
  await ensureControlTable(store.endpoint, env.CONTROL_TABLE_NAME);
  const service = dependenciesFromEnvironment(env);
  const documents = service.control.documents;
  await documents.send(
    new PutCommand({ TableName: env.CONTROL_TABLE_NAME, Item: benchKeyItem(new Date().toISOString()) }),
  );
  // Each request still formats and writes its log line, as on Lambda, but to /dev/null, not over the figures.
  const devNull = openSync('/dev/null', 'w');
  setRequestLogWriter((line) => void writeSync(devNull, `${line}\n`));
  return {
    service,
    documents,
    tableName: env.TABLE_NAME,
    close: async () => {
      documents.destroy();
      await store.close();
    },
  };
}

const expectStatus = (status: number) => (result: APIGatewayProxyResult) => {
  if (result.statusCode !== status) throw new Error(`expected ${status}, got ${result.statusCode}: ${result.body}`);
  return result;
};

/** The four cases: createPet (whose ids the getPet case reads), getPet, and listPets by status and without. */
function warmCases({ service, documents, tableName }: WarmService): WarmCase[] {
  const handlers = {
    listPets: listPetsHandler(service),
    createPet: createPetHandler(service),
    getPet: getPetHandler(service),
  };
  const ids: number[] = [];
  const pet = (i: number) => ({ name: `Pet ${i}`, categoryId: 1, status: 'available' as const });
  const request = (name: keyof typeof handlers, event: ReturnType<typeof apiEvent>, status: number) => async () =>
    expectStatus(status)(await handlers[name](event, localContext('bench')));
  return [
    [
      'createPet',
      (i) => () =>
        documents.send(
          new PutCommand({
            TableName: tableName,
            Item: { id: 9_000_000_000 + i, ...pet(i) },
            ConditionExpression: 'attribute_not_exists(id)',
          }),
        ),
      (i) => {
        const created = request('createPet', apiEvent('POST', '/pets', pet(i)), 201);
        return async () => ids.push((JSON.parse((await created()).body) as { id: number }).id);
      },
    ],
    [
      'getPet',
      (i) => () => documents.send(new GetCommand({ TableName: tableName, Key: { id: ids[i % ids.length] } })),
      (i) => request('getPet', apiEvent('GET', `/pets/${ids[i % ids.length]}`), 200),
    ],
    [
      'listPets ?status=available&limit=20',
      () => {
        // The first round listPets makes: every shard, a share of the 21 items each, in parallel.
        const shards = statusShardsOf('available', shardCountOf(service.pets));
        return () =>
          Promise.all(
            shards.map((shard) => documents.send(statusShardQuery(tableName, shard, shareOf(21, shards.length)))),
          );
      },
      () => request('listPets', apiEvent('GET', '/pets?status=available&limit=20'), 200),
    ],
    [
      'listPets ?limit=20',
      () => () => documents.send(new ScanCommand({ TableName: tableName, Limit: 21 })),
      () => request('listPets', apiEvent('GET', '/pets?limit=20'), 200),
    ],
  ];
}

/** One case: `warmUp` pairs untimed, then `requests` pairs timed, alternating which goes first. */
async function timeCase([name, raw, handler]: WarmCase, warmUp: number, requests: number): Promise<WarmRow> {
  for (let i = 0; i < warmUp; i++) {
    await raw(i)();
    await handler(i)();
  }
  const samples = { raw: [] as number[], handler: [] as number[] };
  for (let i = 0; i < requests; i++) {
    // Alternate which goes first, so neither always meets a store just warmed by the other.
    for (const kind of i % 2 === 0 ? (['raw', 'handler'] as const) : (['handler', 'raw'] as const)) {
      const call = (kind === 'raw' ? raw : handler)(warmUp + i);
      const started = performance.now();
      await call();
      samples[kind].push(performance.now() - started);
    }
  }
  const [rawP50, handlerP50] = [percentile(samples.raw, 50), percentile(samples.handler, 50)];
  const [rawP99, handlerP99] = [percentile(samples.raw, 99), percentile(samples.handler, 99)];
  return {
    case: name,
    rawP50,
    handlerP50,
    p50Ratio: handlerP50 / rawP50,
    rawP99,
    handlerP99,
    p99Ratio: handlerP99 / rawP99,
  };
}

export async function measureWarm(warmUp: number, requests: number): Promise<WarmRow[]> {
  const warm = await warmService();
  try {
    const rows: WarmRow[] = [];
    for (const each of warmCases(warm)) rows.push(await timeCase(each, warmUp, requests));
    return rows;
  } finally {
    await warm.close();
  }
}

export function printWarm(rows: WarmRow[], warmUp: number, requests: number): void {
  table(
    `Warm, in-process on dynalite (${requests} requests each after ${warmUp} to warm up, interleaved with the raw call)`,
    ['case', 'raw p50', 'handler p50', 'ratio', 'raw p99', 'handler p99', 'ratio'],
    rows.map((row) => [
      row.case,
      ms(row.rawP50),
      ms(row.handlerP50),
      times(row.p50Ratio),
      ms(row.rawP99),
      ms(row.handlerP99),
      times(row.p99Ratio),
    ]),
  );
}
