/**
 * `npm run load`: the local API on the embedded store under autocannon (about 70% listPets,
 * 20% createPet with a fresh Idempotency-Key, 10% getPet, valid key), bounded in time and count,
 * beside a bare `node:http` server that makes the same DynamoDB calls, in the same run.
 * Then checks that every pet acknowledged with 201 is stored exactly once, with unique ids.
 * A benchmark, not a test: absolute figures drift on shared machines; the ratio is the figure.
 *
 * LOAD_SECONDS (default 10) and LOAD_CONNECTIONS (default 10) tune it; LOAD_MAX_REQUESTS caps it.
 * The request log (one line per request) and any error lines go to files it names, not over the results.
 * It exits 1, with one line saying why, when either server answered anything but 2xx, acknowledged
 * no pet, or lost one: a benchmark of a server that fails is no benchmark.
 *
 * `--scenario index-throttle` (or LOAD_SCENARIO=index-throttle): the status index's write ceiling,
 * simulated. A fault proxy in front of dynalite admits LOAD_INDEX_WRITES_PER_SECOND (default 50)
 * writes a second per index partition-key value, as DynamoDB does per partition, and refuses the
 * rest with ProvisionedThroughputExceededException. createPet-only load, every pet `available`,
 * runs once with one shard (the unsharded design) and once with the default shard count, and
 * prints each one's createPet throughput and 503 rate side by side.
 */
import { GetCommand, PutCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import autocannon from 'autocannon';
import { createHash, randomUUID } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, writeSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createDocumentClient, isConditionFailed } from '../../lib/store/dynamo.ts';
import { timeOrderedId } from '../../lib/domain/ids.ts';
import { setRequestLogWriter } from '../../lib/http/requestLog.ts';
import { ensureControlTable, ensurePetsTable, startEmbeddedStore } from '../../local/embeddedStore.ts';
import { startLocalApi } from '../../local/server.ts';
import { parseArgs } from 'node:util';
import { API_BASE_PATH, API_STAGE, matchRoute } from '../../lib/domain/routes.ts';
import { dependenciesFromEnvironment } from '../../lib/service.ts';
import { DEFAULT_STATUS_INDEX_SHARDS, STATUS_INDEX_SHARDS_VARIABLE, petsTable } from '../../lib/store/table.ts';
import { localContext, toProxyEvent } from '@petstore/local-kit/proxyEvent';
import { startFaultProxy } from '@petstore/stage-emulator/faultProxy';

const SECONDS = Number(process.env.LOAD_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.LOAD_CONNECTIONS ?? 10);
const MAX_REQUESTS = Number(process.env.LOAD_MAX_REQUESTS ?? 200_000);
const KEY = `load_${randomUUID()}`;

interface Figures {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  /** How many answers of each status were not 2xx, as `503 x2`. */
  notOk: string;
  errors: number;
  created: number[];
}

async function drive(name: string, baseUrl: string, seedIds: number[]): Promise<Figures> {
  const created: number[] = [];
  const url = new URL(baseUrl);
  const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
  const list = { method: 'GET' as const, path: `${url.pathname}/pets?limit=20`, headers };
  const create = {
    method: 'POST' as const,
    path: `${url.pathname}/pets`,
    headers,
    body: JSON.stringify({ name: 'Load', categoryId: 1, status: 'available' }),
    setupRequest: (request: autocannon.Request) => ({
      ...request,
      headers: { ...request.headers, 'idempotency-key': randomUUID() },
    }),
    onResponse: (status: number, body: string) => {
      if (status === 201) created.push((JSON.parse(body) as { id: number }).id);
    },
  };
  const get = {
    method: 'GET' as const,
    setupRequest: (request: autocannon.Request) => ({
      ...request,
      path: `${url.pathname}/pets/${seedIds[Math.floor(Math.random() * seedIds.length)]}`,
    }),
    headers,
  };
  // Ten requests per round: 7 list, 2 create, 1 get.
  const requests = [list, create, list, list, get, list, create, list, list, list];
  const result = await autocannon({
    url: `${url.origin}`,
    connections: CONNECTIONS,
    duration: SECONDS,
    maxOverallRequests: MAX_REQUESTS,
    timeout: 10,
    requests: requests as autocannon.Request[],
  });
  return {
    name,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    notOk: Object.entries(result.statusCodeStats ?? {})
      .filter(([status]) => !status.startsWith('2'))
      .map(([status, { count }]) => `${status} x${count}`)
      .join(', '),
    errors: result.errors + result.timeouts,
    created,
  };
}

/** How often the bare server draws a new id when the one it drew is taken, as createPet does. */
const ID_ATTEMPTS = 3;

/**
 * The same DynamoDB calls the service makes, with nothing around them. A failed request is
 * answered 503 and its error written as one line to the error log (console.error), as the
 * service's are; `newId` is a test seam (ids made to collide).
 */
export function bareServer(endpoint: string, table: string, control: string, newId: () => number = timeOrderedId) {
  const documents = createDocumentClient({ endpoint });
  /** The pet stored under a fresh id: a taken one (two creates in one millisecond) draws again. */
  const storePet = async (fields: object) => {
    for (let attempt = 1; ; attempt++) {
      const pet = { id: newId(), ...fields };
      try {
        await documents.send(
          new PutCommand({ TableName: table, Item: pet, ConditionExpression: 'attribute_not_exists(id)' }),
        );
        return pet;
      } catch (error) {
        if (!isConditionFailed(error) || attempt >= ID_ATTEMPTS) throw error;
      }
    }
  };
  const send = (response: ServerResponse, status: number, body: unknown) => {
    response.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
  };
  const handle = async (request: IncomingMessage, response: ServerResponse, body: string) => {
    const path = new URL(request.url ?? '/', 'http://x').pathname;
    if (request.method === 'POST') {
      const key = String(request.headers['idempotency-key']);
      const pk = `idempotency#${createHash('sha256').update(key).digest('hex')}`;
      const expiresAt = Math.floor(Date.now() / 1000) + 86_400;
      await documents.send(
        new PutCommand({
          TableName: control,
          Item: { pk, sk: 'record', state: 'in_progress', expiresAt },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
      const pet = await storePet(JSON.parse(body) as object);
      await documents.send(
        new UpdateCommand({
          TableName: control,
          Key: { pk, sk: 'record' },
          UpdateExpression: 'SET #s = :c, pet = :p',
          ExpressionAttributeNames: { '#s': 'state' },
          ExpressionAttributeValues: { ':c': 'completed', ':p': pet },
        }),
      );
      return send(response, 201, pet);
    }
    const id = /\/pets\/(\d+)$/.exec(path)?.[1];
    if (id) {
      const { Item } = await documents.send(
        new GetCommand({ TableName: table, Key: { id: Number(id) }, ConsistentRead: true }),
      );
      return send(response, Item ? 200 : 404, Item ?? {});
    }
    const { Items } = await documents.send(new ScanCommand({ TableName: table, Limit: 21 }));
    return send(response, 200, (Items ?? []).slice(0, 20));
  };
  return createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      handle(request, response, Buffer.concat(chunks).toString()).catch((error: unknown) => {
        const { name, message } = error as Error;
        console.error(
          JSON.stringify({
            level: 'ERROR',
            server: 'bare',
            method: request.method,
            path: request.url,
            error: `${name}: ${message}`,
          }),
        );
        send(response, 503, {});
      });
    });
  });
}

interface Verdict {
  line: string;
  /** Why the run failed, in one clause; undefined when it did not. */
  failure?: string;
}

/**
 * Every answer 2xx, at least one pet acknowledged, every acknowledged id unique and stored exactly
 * once with the data sent. Zero acknowledged is a failure: a check that passes on nothing cannot fail.
 */
async function verify(endpoint: string, table: string, figures: Figures): Promise<Verdict> {
  const documents = createDocumentClient({ endpoint });
  const unique = new Set(figures.created);
  let readable = 0;
  for (const id of unique) {
    const { Item } = await documents.send(new GetCommand({ TableName: table, Key: { id } }));
    if (Item?.name === 'Load') readable++;
  }
  const failure =
    figures.non2xx > 0
      ? `${figures.non2xx} answers were not 2xx (${figures.notOk})`
      : figures.errors > 0
        ? `${figures.errors} requests failed or timed out`
        : figures.created.length === 0
          ? 'no pet was acknowledged'
          : unique.size !== figures.created.length
            ? `${figures.created.length - unique.size} acknowledged ids were repeated`
            : readable !== unique.size
              ? `${unique.size - readable} acknowledged pets were not stored`
              : undefined;
  const counts = `${figures.created.length} acknowledged, ${unique.size} unique ids, ${readable} readable`;
  return { line: `${counts}: ${failure ? `FAILED (${failure})` : 'OK'}`, ...(failure ? { failure } : {}) };
}

/**
 * Error lines (lib/domain/log.ts writes one per failed request) to a file beside the request log:
 * a failing run says so once at its end, not in thousands of lines over the results.
 */
function errorLinesToFile(beside: string): { path: string; close(): void } {
  const path = join(dirname(beside), 'errors.log');
  const file = openSync(path, 'w');
  const consoleError = console.error;
  console.error = (...parts: unknown[]) => void writeSync(file, `${parts.join(' ')}\n`);
  return {
    path,
    close: () => {
      console.error = consoleError;
      closeSync(file);
    },
  };
}

/**
 * The request log lines, to a file of their own: still formatted and written per request (the
 * local API's cost includes them, as a function's does), never mixed with the results.
 */
function requestLogToFile(): { path: string; close(): void } {
  const path = join(mkdtempSync(join(tmpdir(), 'petstore-load-')), 'requests.log');
  const file = openSync(path, 'w');
  setRequestLogWriter((line) => void writeSync(file, `${line}\n`));
  return { path, close: () => closeSync(file) };
}

async function main(): Promise<void> {
  const requestLog = requestLogToFile();
  const errorLog = errorLinesToFile(requestLog.path);
  console.log(`Request log: ${requestLog.path}; error lines: ${errorLog.path}`);
  const store = await startEmbeddedStore();
  const tables = { service: ['pets-load', 'control-load'], bare: ['pets-bare', 'control-bare'] } as const;
  for (const [pets, control] of Object.values(tables)) {
    await ensurePetsTable(store.endpoint, pets);
    await ensureControlTable(store.endpoint, control);
  }
  const seed = createDocumentClient({ endpoint: store.endpoint });
  const seedIds: number[] = [];
  for (let i = 0; i < 50; i++) {
    const pet = { id: timeOrderedId(), name: `Seed ${i}`, categoryId: 1, status: 'available' };
    seedIds.push(pet.id);
    for (const [pets] of Object.values(tables)) await seed.send(new PutCommand({ TableName: pets, Item: pet }));
  }

  Object.assign(process.env, {
    DYNAMODB_ENDPOINT: store.endpoint,
    TABLE_NAME: tables.service[0],
    CONTROL_TABLE_NAME: tables.service[1],
    PETSTORE_API_KEYS: KEY,
    PETSTORE_CURSOR_SECRET: randomUUID(),
  });
  const api = await startLocalApi({ port: 0, quiet: true });
  const bare = bareServer(store.endpoint, ...tables.bare);
  await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
  const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}/v1`;

  console.log(`${SECONDS} s each, ${CONNECTIONS} connections, 70% list / 20% create (Idempotency-Key) / 10% get`);
  const bareFigures = await drive('bare node:http + DynamoDB', bareUrl, seedIds);
  const apiFigures = await drive('local API (middy handlers)', api.url, seedIds);
  for (const f of [apiFigures, bareFigures]) {
    console.log(
      `${f.name.padEnd(28)} ${f.rps.toFixed(0).padStart(6)} req/s  p50 ${f.p50} ms  p99 ${f.p99} ms  non-2xx ${f.non2xx}  errors ${f.errors}`,
    );
  }
  console.log(`ratio (local API / bare): ${(apiFigures.rps / bareFigures.rps).toFixed(2)} of the requests per second`);
  const apiVerdict = await verify(store.endpoint, tables.service[0], apiFigures);
  const bareVerdict = await verify(store.endpoint, tables.bare[0], bareFigures);
  console.log(`local API check: ${apiVerdict.line}`);
  console.log(`bare check:      ${bareVerdict.line}`);

  bare.close();
  await api.close();
  await store.close();
  requestLog.close();
  errorLog.close();
  const failed = [
    ['the local API', apiVerdict],
    ['the bare server', bareVerdict],
  ] as const;
  const failures = failed
    .filter(([, verdict]) => verdict.failure)
    .map(([name, verdict]) => `${name}: ${verdict.failure}`);
  if (failures.length) {
    console.error(`npm run load: FAILED, ${failures.join('; ')} (error lines: ${errorLog.path})`);
    process.exitCode = 1;
  }
}

interface CeilingFigures {
  shards: number;
  requests: number;
  created: number;
  unavailable: number;
  other: number;
  seconds: number;
}

/**
 * functions/createPet.ts, imported only here and only once its store is up: importing a function
 * module builds the process's default service from process.env as it is then (lib/service.ts).
 */
type CreatePetModule = typeof import('../../functions/createPet.ts');

/** createPet alone, as an HTTP server: the handler as deployed, with its own service; `drain` awaits the calls in flight. */
function createPetServer({ createHandler }: CreatePetModule, env: Record<string, string>) {
  const handler = createHandler(dependenciesFromEnvironment(env));
  const inFlight = new Set<Promise<unknown>>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const url = new URL(request.url ?? '/', 'http://load');
      const path = url.pathname.slice(API_BASE_PATH.length);
      const match = matchRoute(request.method ?? 'GET', path);
      if (!url.pathname.startsWith(API_BASE_PATH) || match.kind !== 'found') return void response.writeHead(404).end();
      const event = toProxyEvent(
        {
          method: request.method ?? 'GET',
          path,
          query: url.searchParams,
          rawHeaders: request.rawHeaders,
          body: Buffer.concat(chunks),
          sourceIp: '127.0.0.1',
        },
        match.route,
        match.pathParameters,
        API_STAGE,
      );
      const call = handler(event, localContext('createPet'))
        .then(
          (result) =>
            void response.writeHead(result.statusCode, result.headers as Record<string, string>).end(result.body),
        )
        .catch(() => void response.writeHead(500).end())
        .finally(() => inFlight.delete(call));
      inFlight.add(call);
    });
  });
  return { server, drain: () => Promise.all(inFlight) };
}

async function indexCeiling(): Promise<void> {
  const rate = Number(process.env.LOAD_INDEX_WRITES_PER_SECOND ?? 50);
  // Enough connections to offer more than the sharded ceiling while throttled requests wait on retries.
  const connections = Number(process.env.LOAD_CONNECTIONS ?? 64);
  const requestLog = requestLogToFile();
  // Each refused create is logged as an error line (lib/domain/log.ts): beside the request log, not over the results.
  const errorLog = errorLinesToFile(requestLog.path);
  console.log(`Request log: ${requestLog.path}; error lines: ${errorLog.path}`);
  const store = await startEmbeddedStore();
  const proxy = await startFaultProxy(store.endpoint);
  const createPet: CreatePetModule = await import('../../functions/createPet.ts');
  proxy.fault = {
    kind: 'indexPartitionLimit',
    keyAttribute: petsTable.statusIndex.partitionKey.name,
    writesPerSecond: rate,
  };
  console.log(
    `index-throttle: ${rate} writes/s per index key value (simulated), createPet only, all 'available', ${SECONDS} s each, ${connections} connections`,
  );
  const figures: CeilingFigures[] = [];
  for (const shards of [1, DEFAULT_STATUS_INDEX_SHARDS]) {
    const [pets, control] = [`pets-ceiling-${shards}`, `control-ceiling-${shards}`];
    await ensurePetsTable(store.endpoint, pets);
    await ensureControlTable(store.endpoint, control);
    const { server, drain } = createPetServer(createPet, {
      TABLE_NAME: pets,
      CONTROL_TABLE_NAME: control,
      DYNAMODB_ENDPOINT: proxy.endpoint,
      AWS_REGION: 'us-east-1',
      PETSTORE_API_KEYS: KEY,
      PETSTORE_CURSOR_SECRET: randomUUID(),
      [STATUS_INDEX_SHARDS_VARIABLE]: String(shards),
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const statuses = new Map<number, number>();
    const result = await autocannon({
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${API_BASE_PATH}/pets`,
      method: 'POST',
      connections,
      duration: SECONDS,
      timeout: 10,
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Load', categoryId: 1, status: 'available' }),
      setupClient: (client) =>
        client.on('response', (status: number) => void statuses.set(status, (statuses.get(status) ?? 0) + 1)),
    });
    await drain();
    server.close();
    const requests = [...statuses.values()].reduce((sum, count) => sum + count, 0);
    const created = statuses.get(201) ?? 0;
    const unavailable = statuses.get(503) ?? 0;
    figures.push({
      shards,
      requests,
      created,
      unavailable,
      other: requests - created - unavailable + result.errors + result.timeouts,
      seconds: result.duration,
    });
  }
  console.log(
    `\n${'shards'.padEnd(14)} ${'requests'.padStart(8)} ${'201/s'.padStart(7)} ${'503 rate'.padStart(8)} ${'other'.padStart(5)}  ceiling (shards x limit)`,
  );
  for (const f of figures) {
    const label = `${f.shards}${f.shards === 1 ? ' (unsharded)' : ' (default)'}`;
    console.log(
      `${label.padEnd(14)} ${String(f.requests).padStart(8)} ${(f.created / f.seconds).toFixed(1).padStart(7)} ${`${((100 * f.unavailable) / Math.max(1, f.requests)).toFixed(1)}%`.padStart(8)} ${String(f.other).padStart(5)}  ${f.shards * rate}/s`,
    );
  }
  await proxy.close();
  await store.close();
  requestLog.close();
  errorLog.close();
}

const SCENARIOS = { mixed: main, 'index-throttle': indexCeiling } as const;

function scenarioOf(argv: string[]): keyof typeof SCENARIOS {
  try {
    const { values } = parseArgs({ args: argv, options: { scenario: { type: 'string' } } });
    const name = values.scenario ?? process.env.LOAD_SCENARIO ?? 'mixed';
    if (name in SCENARIOS) return name as keyof typeof SCENARIOS;
    console.error(`npm run load: unknown scenario '${name}' (known: ${Object.keys(SCENARIOS).join(', ')})`);
  } catch (error) {
    console.error(`npm run load: ${(error as Error).message}`);
  }
  process.exit(2);
}

/** `npm run load [--scenario <name>]`. */
export async function runLoad(argv: string[]): Promise<void> {
  await SCENARIOS[scenarioOf(argv)]();
}
