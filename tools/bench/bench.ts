/**
 * `npm run bench` (`-- --quick` for a fast, rougher run): every figure beside the floor's, from the
 * same run on the same machine, with its ratio. Figures only; nothing here asserts a time.
 *
 * 1. Bytes: each function bundled exactly as deployed, against two builds of the floor
 *    (tools/bench/floor.ts: one GetCommand through DynamoDBDocumentClient): the default floor, built the
 *    usual way (the targets are ratios to it), and the Lambda floor, built with the functions'
 *    own options (tools/bench/bundles.ts).
 * 2. Cold import: a fresh Node process imports a bundle (what Lambda's init pays), with the
 *    functions' NODE_OPTIONS, after loading the built-ins Lambda's runtime has loaded
 *    (tools/bench/coldRequest.ts); both floors' imports are interleaved with every function's. The
 *    run says which targets it met.
 * 3. Cold request: a fresh process imports a bundle and serves its first invocation against an
 *    instant stand-in DynamoDB (tools/bench/coldRequest.ts), interleaved with both floors' import + one
 *    GetCommand: import, first invocation, both, and their ratios to the default floor's.
 * 4. Warm: each handler in-process on dynalite, interleaved request by request with the raw
 *    DynamoDB call it makes, keys and cursor secret read from the control table as deployed.
 *
 * `--cold-only` stops after 3 (while iterating on the cold start). Writes tools/bench/results.json (not committed).
 */
import { GetCommand, PutCommand, ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { createHandler as createPetHandler } from '../../functions/createPet.ts';
import { createHandler as getPetHandler } from '../../functions/getPet.ts';
import { createHandler as listPetsHandler } from '../../functions/listPets.ts';
import { FUNCTION_NODE_OPTIONS, PROJECT_ROOT } from '../../infra/bundling.ts';
import { STAGE_SETTINGS } from '../../infra/stages.ts';
import { digestKey } from '../../lib/domain/apiKeys.ts';
import { keyItem } from '../../lib/store/controlTableKeys.ts';
import { verdictContext } from '../../lib/http/authorizerVerdict.ts';
import { setRequestLogWriter } from '../../lib/http/requestLog.ts';
import { matchRoute } from '../../lib/domain/routes.ts';
import { serviceFromEnvironment } from '../../lib/service.ts';
import { createDocumentClient } from '../../lib/store/dynamo.ts';
import { listPets, shareOf, statusShardQuery } from '../../lib/store/petPages.ts';
import { createPet } from '../../lib/store/petWrites.ts';
import { DEFAULT_STATUS_INDEX_SHARDS, shardCountOf, statusShardsOf, type PetsTable } from '../../lib/store/table.ts';
import { localContext, toProxyEvent } from '../../local/proxyEvent.ts';
import { ensureControlTable, ensurePetsTable, startEmbeddedStore } from '../../local/store.ts';
import { FLOOR_LABELS, TARGETS, beyondFloor, buildAllBundles, type BuiltBundle, type FloorName } from './bundles.ts';
import {
  STAND_IN_TABLES,
  checkLaunch,
  coldRequest,
  launchReport,
  lambdaNodeArgs,
  lambdaRuntimePrelude,
  nodeCommand,
  startStandInDynamo,
  type ColdSample,
  type Invocation,
  type LaunchReport,
  type ProcessLaunch,
} from './coldRequest.ts';

/** The functions' memory as production deploys them: what Lambda's runtime sizes node's heap from. */
const FUNCTION_MEMORY_MIB = STAGE_SETTINGS.production.functionMemoryMiB;

const USAGE = 'Usage: npm run bench [-- --quick] [--cold-only] [--lambda-node-args] [--one-core]';

type BenchFlags = { quick?: boolean | undefined; 'cold-only'?: boolean | undefined; 'lambda-node-args'?: boolean | undefined; 'one-core'?: boolean | undefined };

/** The flags, or one line and exit 2 for anything else (a positional too: the bench takes none). */
function benchFlags(): BenchFlags {
  try {
    const boolean = { type: 'boolean' } as const;
    return parseArgs({ options: { quick: boolean, 'cold-only': boolean, 'lambda-node-args': boolean, 'one-core': boolean } }).values;
  } catch (error) {
    console.error(`npm run bench: ${(error as Error).message} (${USAGE})`);
    process.exit(2);
  }
}

/**
 * How every process the bench times is started (the floors' alike): plain by default;
 * `--lambda-node-args` with the arguments Lambda's runtime gives `node` for the functions' memory,
 * `--one-core` confined to one CPU, the last, as a function whose memory buys less than one vCPU
 * runs; the bench itself (the stand-in DynamoDB) then keeps to the others, if the machine has more
 * than one. One line and exit 2 if `taskset` is missing.
 */
function processLaunch(flags: BenchFlags): ProcessLaunch {
  const nodeArgs = flags['lambda-node-args'] ? lambdaNodeArgs(FUNCTION_MEMORY_MIB) : [];
  if (!flags['one-core']) return { nodeArgs };
  const cpus = availableParallelism();
  const cpu = cpus - 1;
  const pinned = spawnSync('taskset', ['--all-tasks', '--cpu-list', '--pid', cpus > 1 ? `0-${cpu - 1}` : '0', String(process.pid)], { encoding: 'utf8' });
  if (pinned.status !== 0) {
    console.error(`npm run bench: --one-core needs taskset (util-linux): ${pinned.error?.message ?? pinned.stderr.trim()}`);
    process.exit(2);
  }
  return { nodeArgs, cpu };
}

const flags = benchFlags();
const LAUNCH = processLaunch(flags);
// --quick (the walkthrough test's run) proves the machinery with few samples: its figures are rough.
const COLD_IMPORTS = flags.quick ? 3 : 21;
// 41, not the issue's minimum of 11: a fresh process here runs at one of two speeds (the quartiles
// of one bundle's import lie about 10 ms apart), so the median of 21 moved the ratios by up to
// 0.04x from run to run (11 by more).
const COLD_REQUESTS = flags.quick ? 3 : 41;
const WARM_REQUESTS = flags.quick ? 300 : 2_000;
const WARM_UP = flags.quick ? 30 : 200;
const KEY = 'bench-key-0123456789abcdef';
const BENCH_KEY_ID = 'bench0000000';

const kb = (bytes: number) => `${(bytes / 1000).toFixed(1)} kB`;
const ms = (value: number) => `${value.toFixed(2)} ms`;
const ratio = (value: number, floor: number) => `${(value / floor).toFixed(3)}x`;
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
};

function table(title: string, header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(`\n${title}\n${line(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}`);
  for (const row of rows) console.log(line(row));
}

/** The API Gateway proxy event of one request with the bench's key, as the local API builds it. */
function apiEvent(method: string, target: string, body?: unknown) {
  const url = new URL(target, 'http://bench');
  const match = matchRoute(method, url.pathname);
  if (match.kind !== 'found') throw new Error(target);
  const headers = ['Host', 'bench', 'Authorization', `Bearer ${KEY}`, ...(body ? ['Content-Type', 'application/json'] : [])];
  const raw = Buffer.from(body ? JSON.stringify(body) : '');
  return toProxyEvent({ method, path: url.pathname, query: url.searchParams, rawHeaders: headers, body: raw, sourceIp: '127.0.0.1' }, match.route, match.pathParameters);
}

/**
 * Milliseconds a fresh Node process takes to import `file`, measured inside that process, after the
 * built-ins Lambda's runtime has loaded (tools/bench/coldRequest.ts, `lambdaRuntimePrelude`).
 */
function coldImport(file: string): number {
  const script =
    `${lambdaRuntimePrelude}\nconst t = process.hrtime.bigint(); await import(${JSON.stringify(pathToFileURL(file).href)}); const ms = Number(process.hrtime.bigint() - t) / 1e6;\n` +
    `process.stdout.write(JSON.stringify({ ms, ...${launchReport} }));`;
  const env = {
    PATH: process.env.PATH ?? '',
    NODE_OPTIONS: FUNCTION_NODE_OPTIONS,
    NODE_NO_WARNINGS: '1',
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'bench',
    AWS_SECRET_ACCESS_KEY: 'bench',
    TABLE_NAME: 'pets',
    CONTROL_TABLE_NAME: 'petstore-control',
  };
  const [command, args] = nodeCommand(LAUNCH, ['--input-type=module', '-e', script]);
  const { ms, ...seen } = JSON.parse(execFileSync(command, args, { env, encoding: 'utf8' })) as LaunchReport & { ms: number };
  checkLaunch(file, LAUNCH, seen);
  return ms;
}

/** A bundle's figures beside one floor's, from the same run. */
interface AgainstFloor {
  bytes: number;
  importMedianMs: number;
  bytesRatio: number;
  importRatio: number;
}

interface SizeRow {
  name: string;
  bytes: number;
  importMedianMs: number;
  /** Against the default floor (the targets) and the Lambda floor (what the function itself adds). */
  floor: AgainstFloor;
  lambdaFloor: AgainstFloor;
  /** Bytes per source beyond the Lambda floor, the largest first. */
  beyondFloor: [string, number][];
}

interface FloorRow {
  name: FloorName;
  label: string;
  bytes: number;
  /** Median of every import of this floor in the run (each interleaved with a function's). */
  importMedianMs: number;
}

const against = (bytes: number, importMedianMs: number, floorBytes: number, floorTimes: number[]): AgainstFloor => {
  const floorImportMedianMs = percentile(floorTimes, 50);
  return { bytes: floorBytes, importMedianMs: floorImportMedianMs, bytesRatio: bytes / floorBytes, importRatio: importMedianMs / floorImportMedianMs };
};

async function bundlesAndColdImports(): Promise<{ floors: FloorRow[]; functions: SizeRow[]; cold: ColdRow[] }> {
  const { floor, lambdaFloor, functions } = await buildAllBundles();
  const dir = mkdtempSync(join(tmpdir(), 'petstore-bench-'));
  try {
    const files = new Map<BuiltBundle, string>();
    for (const bundle of [floor, lambdaFloor, ...functions]) {
      mkdirSync(join(dir, bundle.name));
      files.set(bundle, join(dir, bundle.name, 'index.mjs'));
      writeFileSync(files.get(bundle)!, bundle.code);
    }
    // Each function's imports beside both floors' of the same moment, the order rotated run by run.
    const times = new Map<BuiltBundle, Map<BuiltBundle, number[]>>(
      functions.map((f) => [f, new Map([f, floor, lambdaFloor].map((b) => [b, [] as number[]]))]),
    );
    for (let run = 0; run < COLD_IMPORTS; run++) {
      for (const bundle of functions) {
        const order = [bundle, floor, lambdaFloor];
        for (let i = 0; i < order.length; i++) {
          const next = order[(run + i) % order.length]!;
          times.get(bundle)!.get(next)!.push(coldImport(files.get(next)!));
        }
      }
    }
    const allOf = (built: BuiltBundle) => [...times.values()].flatMap((samples) => samples.get(built)!);
    const floors: FloorRow[] = [floor, lambdaFloor].map((built) => ({
      name: built.name as FloorName,
      label: FLOOR_LABELS[built.name as FloorName],
      bytes: built.bytes,
      importMedianMs: percentile(allOf(built), 50),
    }));
    const rows = functions.map((bundle): SizeRow => {
      const samples = times.get(bundle)!;
      const importMedianMs = percentile(samples.get(bundle)!, 50);
      return {
        name: bundle.name,
        bytes: bundle.bytes,
        importMedianMs,
        floor: against(bundle.bytes, importMedianMs, floor.bytes, samples.get(floor)!),
        lambdaFloor: against(bundle.bytes, importMedianMs, lambdaFloor.bytes, samples.get(lambdaFloor)!),
        beyondFloor: beyondFloor(bundle, lambdaFloor).slice(0, 6),
      };
    });
    return { floors, functions: rows, cold: await coldRequests(files, floor, lambdaFloor, functions) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A bundle's cold request: medians of its fresh processes' import, first invocation and both together. */
interface ColdFigures {
  importMs: number;
  firstMs: number;
  coldMs: number;
  /** The cold request's CPU time (user + system): steadier than wall time on a shared machine; not a target. */
  coldCpuMs: number;
}

interface ColdRow extends ColdFigures {
  name: BuiltBundle['name'];
  /** Run with V8's code cache (NODE_COMPILE_CACHE), produced beforehand by one untimed run of the same file. */
  compileCache: boolean;
  /** The cold request and the first invocation alone against the default floor's, in the same run. */
  coldRatio: number;
  firstRatio: number;
  coldCpuRatio: number;
}

const medians = (samples: ColdSample[]): ColdFigures => ({
  importMs: percentile(samples.map((s) => s.importMs), 50),
  firstMs: percentile(samples.map((s) => s.firstMs), 50),
  coldMs: percentile(samples.map((s) => s.importMs + s.firstMs), 50),
  coldCpuMs: percentile(samples.map((s) => s.importCpuMs + s.firstCpuMs), 50),
});

/**
 * What each bundle's first invocation is: the functions' requests with the bench's key as API
 * Gateway hands them on behind the key authorizer (its fresh verdict: the function reads no keys,
 * lib/http/authorizerVerdict.ts), the floors' GetCommand.
 */
function coldInvocations(): Record<BuiltBundle['name'], Invocation> {
  const status = (code: number) => (result: unknown) => (result as { statusCode?: unknown } | null)?.statusCode === code;
  const floor: Invocation = { event: { id: 4_000_001 }, expect: (item) => (item as { id?: unknown } | null)?.id === 4_000_001, keyReads: 0 };
  const behindTheAuthorizer = (event: ReturnType<typeof apiEvent>) => ({
    ...event,
    requestContext: { ...event.requestContext, authorizer: { principalId: BENCH_KEY_ID, ...verdictContext({ keyId: BENCH_KEY_ID, keysReadAt: Date.now(), digest: digestKey(KEY), expiresAt: Date.now() + 86_400_000 }), integrationLatency: 4 } },
  });
  return {
    floor,
    lambdaFloor: floor,
    listPets: { event: behindTheAuthorizer(apiEvent('GET', '/pets?limit=20')), expect: status(200), keyReads: 0 },
    createPet: { event: behindTheAuthorizer(apiEvent('POST', '/pets', { name: 'Cold', categoryId: 1, status: 'available' })), expect: status(201), keyReads: 0 },
    getPet: { event: behindTheAuthorizer(apiEvent('GET', '/pets/4000001')), expect: status(200), keyReads: 0 },
  };
}

/**
 * Each function's cold request (import + first invocation, a fresh process each) against the
 * stand-in DynamoDB, interleaved with both floors' (import + one GetCommand), the order rotated run by run.
 */
async function coldRequests(files: Map<BuiltBundle, string>, floor: BuiltBundle, lambdaFloor: BuiltBundle, functions: BuiltBundle[]): Promise<ColdRow[]> {
  const standIn = await startStandInDynamo(keyItem({ keyId: BENCH_KEY_ID, sha256: digestKey(KEY).toString('hex'), createdAt: new Date().toISOString() }));
  try {
    const invocations = coldInvocations();
    const environment = { NODE_OPTIONS: FUNCTION_NODE_OPTIONS };
    // The compile-cache variant: a cache directory beside each function's file, written by one
    // untimed cold request (as a build step would), then only read.
    const cacheOf = (bundle: BuiltBundle) => ({ ...environment, NODE_COMPILE_CACHE: join(dirname(files.get(bundle)!), 'compile-cache') });
    for (const bundle of functions) await coldRequest(files.get(bundle)!, invocations[bundle.name], standIn, cacheOf(bundle), LAUNCH);
    type Variant = { bundle: BuiltBundle; compileCache: boolean };
    const variants: Variant[] = [floor, lambdaFloor, ...functions].map((bundle) => ({ bundle, compileCache: false }));
    variants.push(...functions.map((bundle) => ({ bundle, compileCache: true })));
    const samples = new Map<Variant, ColdSample[]>(variants.map((v) => [v, []]));
    const variantOf = (bundle: BuiltBundle, compileCache = false) => variants.find((v) => v.bundle === bundle && v.compileCache === compileCache)!;
    for (let run = 0; run < COLD_REQUESTS; run++) {
      for (const bundle of functions) {
        const order = [variantOf(bundle), variantOf(bundle, true), variantOf(floor), variantOf(lambdaFloor)];
        for (let i = 0; i < order.length; i++) {
          const next = order[(run + i) % order.length]!;
          const env = next.compileCache ? cacheOf(next.bundle) : environment;
          samples.get(next)!.push(await coldRequest(files.get(next.bundle)!, invocations[next.bundle.name], standIn, env, LAUNCH));
        }
      }
    }
    const base = medians(samples.get(variantOf(floor))!);
    return variants.map(({ bundle, compileCache }) => {
      const figures = medians(samples.get(variantOf(bundle, compileCache))!);
      return {
        name: bundle.name,
        compileCache,
        ...figures,
        coldRatio: figures.coldMs / base.coldMs,
        firstRatio: figures.firstMs / base.firstMs,
        coldCpuRatio: figures.coldCpuMs / base.coldCpuMs,
      };
    });
  } finally {
    await standIn.close();
  }
}

/** One line per target: met or not, with every function's ratio. */
function targetLines(rows: SizeRow[]): { lines: string[]; met: { bytes: boolean; importMedian: boolean } } {
  const check = (what: string, limit: number, ratioOf: (row: SizeRow) => number) => {
    const missed = rows.filter((row) => ratioOf(row) > limit);
    const figures = rows.map((row) => `${row.name} ${ratioOf(row).toFixed(3)}x`).join(', ');
    const verdict = missed.length === 0 ? 'MET by every function' : `NOT MET by ${missed.map((row) => row.name).join(', ')}`;
    return { line: `  ${what} <= ${limit.toFixed(2)}x the default floor's: ${verdict} (${figures})`, met: missed.length === 0 };
  };
  const bytes = check('bytes', TARGETS.bytes, (row) => row.floor.bytesRatio);
  const importMedian = check('import median', TARGETS.importMedian, (row) => row.floor.importRatio);
  return { lines: [bytes.line, importMedian.line], met: { bytes: bytes.met, importMedian: importMedian.met } };
}

interface WarmRow {
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

async function warm(): Promise<WarmRow[]> {
  const store = await startEmbeddedStore();
  const env = {
    TABLE_NAME: 'bench',
    CONTROL_TABLE_NAME: 'bench-control',
    DYNAMODB_ENDPOINT: store.endpoint,
    AWS_REGION: 'us-east-1',
  };
  await ensurePetsTable(store.endpoint, env.TABLE_NAME);
  await ensureControlTable(store.endpoint, env.CONTROL_TABLE_NAME);
  // As deployed: no key or secret in the environment; both come from the control table.
  const service = serviceFromEnvironment(env);
  const documents: DynamoDBDocumentClient = service.control.documents;
  await documents.send(
    new PutCommand({
      TableName: env.CONTROL_TABLE_NAME,
      Item: keyItem({ keyId: 'bench0000000', sha256: digestKey(KEY).toString('hex'), createdAt: new Date().toISOString() }),
    }),
  );
  // Each request still formats and writes its log line, as on Lambda, but to /dev/null, not over the figures.
  const devNull = openSync('/dev/null', 'w');
  setRequestLogWriter((line) => void writeSync(devNull, `${line}\n`));
  const handlers = { listPets: listPetsHandler(service), createPet: createPetHandler(service), getPet: getPetHandler(service) };

  const expect = (status: number) => (result: APIGatewayProxyResult) => {
    if (result.statusCode !== status) throw new Error(`expected ${status}, got ${result.statusCode}: ${result.body}`);
    return result;
  };

  const ids: number[] = [];
  const pet = (i: number) => ({ name: `Pet ${i}`, categoryId: 1, status: 'available' as const });
  const cases: [string, Call, Call][] = [
    [
      'createPet',
      (i) => {
        const command = () => new PutCommand({ TableName: env.TABLE_NAME, Item: { id: 9_000_000_000 + i, ...pet(i) }, ConditionExpression: 'attribute_not_exists(id)' });
        return () => documents.send(command());
      },
      (i) => {
        const request = apiEvent('POST', '/pets', pet(i));
        return async () => ids.push((JSON.parse(expect(201)(await handlers.createPet(request, localContext('bench'))).body) as { id: number }).id);
      },
    ],
    [
      'getPet',
      (i) => {
        const command = () => new GetCommand({ TableName: env.TABLE_NAME, Key: { id: ids[i % ids.length] } });
        return () => documents.send(command());
      },
      (i) => {
        const request = apiEvent('GET', `/pets/${ids[i % ids.length]}`);
        return async () => expect(200)(await handlers.getPet(request, localContext('bench')));
      },
    ],
    [
      'listPets ?status=available&limit=20',
      () => {
        // The first round listPets makes: every shard, a share of the 21 items each, in parallel.
        const shards = statusShardsOf('available', shardCountOf(service.pets));
        const commands = () => shards.map((shard) => statusShardQuery(env.TABLE_NAME, shard, shareOf(21, shards.length)));
        return () => Promise.all(commands().map((command) => documents.send(command)));
      },
      () => {
        const request = apiEvent('GET', '/pets?status=available&limit=20');
        return async () => expect(200)(await handlers.listPets(request, localContext('bench')));
      },
    ],
    [
      'listPets ?limit=20',
      () => {
        const command = () => new ScanCommand({ TableName: env.TABLE_NAME, Limit: 21 });
        return () => documents.send(command());
      },
      () => {
        const request = apiEvent('GET', '/pets?limit=20');
        return async () => expect(200)(await handlers.listPets(request, localContext('bench')));
      },
    ],
  ];

  const rows: WarmRow[] = [];
  for (const [name, raw, handler] of cases) {
    for (let i = 0; i < WARM_UP; i++) {
      await raw(i)();
      await handler(i)();
    }
    const samples = { raw: [] as number[], handler: [] as number[] };
    for (let i = 0; i < WARM_REQUESTS; i++) {
      // Alternate which goes first, so neither always meets a store just warmed by the other.
      const order = i % 2 === 0 ? (['raw', 'handler'] as const) : (['handler', 'raw'] as const);
      for (const kind of order) {
        const call = (kind === 'raw' ? raw : handler)(WARM_UP + i);
        const started = performance.now();
        await call();
        samples[kind].push(performance.now() - started);
      }
    }
    const [rawP50, handlerP50, rawP99, handlerP99] = [
      percentile(samples.raw, 50),
      percentile(samples.handler, 50),
      percentile(samples.raw, 99),
      percentile(samples.handler, 99),
    ] as [number, number, number, number];
    rows.push({ case: name, rawP50, handlerP50, p50Ratio: handlerP50 / rawP50, rawP99, handlerP99, p99Ratio: handlerP99 / rawP99 });
  }
  documents.destroy();
  await store.close();
  return rows;
}

interface ReadCostRow {
  shards: number;
  limit: number;
  pets: number;
  pages: number;
  itemsRead: number;
  queries: number;
  itemsPerPet: number;
}

/**
 * Read amplification of the sharded status index: index items read (the Query answers' Count) per
 * pet listed over full walks of one status, by shard count and page size, on dynalite.
 */
async function statusIndexReadCost(): Promise<ReadCostRow[]> {
  const PETS = flags.quick ? 300 : 1_000;
  const store = await startEmbeddedStore();
  const documents = createDocumentClient({ endpoint: store.endpoint });
  const reads = { items: 0, queries: 0 };
  documents.middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      if (context.commandName === 'QueryCommand') {
        reads.queries++;
        reads.items += (result.output as { Count?: number }).Count ?? 0;
      }
      return result;
    },
    { step: 'initialize', name: 'countIndexReads' },
  );
  const rows: ReadCostRow[] = [];
  for (const shards of [...new Set([1, DEFAULT_STATUS_INDEX_SHARDS, 4, 8])].sort((a, b) => a - b)) {
    const table: PetsTable = { documents, tableName: `read-cost-${shards}`, statusIndexShards: shards };
    await ensurePetsTable(store.endpoint, table.tableName);
    for (let i = 0; i < PETS; i += 25) {
      const batch = Array.from({ length: Math.min(25, PETS - i) }, (_, j) => ({ name: `Pet ${i + j}`, categoryId: 1, status: 'available' as const }));
      await Promise.all(batch.map((pet) => createPet(table, pet)));
    }
    for (const limit of [1, 20, 100]) {
      Object.assign(reads, { items: 0, queries: 0 });
      let listed = 0;
      let pages = 0;
      let afterId: number | undefined;
      do {
        const page = await listPets(table, { limit, status: 'available', afterId });
        listed += page.pets.length;
        pages++;
        afterId = page.lastId;
      } while (afterId !== undefined);
      if (listed !== PETS) throw new Error(`walk of ${shards} shards, limit ${limit}: ${listed} pets listed of ${PETS}`);
      rows.push({ shards, limit, pets: listed, pages, itemsRead: reads.items, queries: reads.queries, itemsPerPet: reads.items / listed });
    }
  }
  documents.destroy();
  await store.close();
  return rows;
}

const started = new Date();
const given = Object.keys(flags).map((flag) => ` --${flag}`).join('');
console.log(`npm run bench${given}: Node ${process.version} ${process.platform}/${process.arch}, ${started.toISOString()}`);
console.log(
  `Timed processes: node ${LAUNCH.nodeArgs.length > 0 ? `${LAUNCH.nodeArgs.join(' ')} (Lambda's runtime, ${FUNCTION_MEMORY_MIB} MiB)` : 'without arguments'}, ` +
    `${LAUNCH.cpu === undefined ? `free to use all ${availableParallelism()} CPUs` : `confined to CPU ${LAUNCH.cpu}`}.`,
);
console.log(
  `NODE_OPTIONS of the functions: ${FUNCTION_NODE_OPTIONS || '(none)'}. Targets: bytes <= ${TARGETS.bytes.toFixed(2)}x and import <= ` +
    `${TARGETS.importMedian.toFixed(2)}x the default floor's; warm p50 <= 1.10x, p99 <= 1.20x the raw call's.`,
);

const sizes = await bundlesAndColdImports();
const [defaultFloor] = sizes.floors;
table(
  `Floors (tools/bench/floor.ts, one GetCommand; import: median of its ${COLD_IMPORTS * sizes.functions.length} fresh processes in this run)`,
  ['floor', 'bytes', 'ratio', 'import', 'ratio'],
  sizes.floors.map((row) => [row.label, kb(row.bytes), ratio(row.bytes, defaultFloor!.bytes), ms(row.importMedianMs), ratio(row.importMedianMs, defaultFloor!.importMedianMs)]),
);
table(
  `Bundles and cold import (median of ${COLD_IMPORTS} fresh processes each, interleaved with as many of each floor's)`,
  ['function', 'bytes', 'floor', 'ratio', 'Lambda floor', 'ratio', 'import', 'floor', 'ratio', 'Lambda floor', 'ratio'],
  sizes.functions.map((row) => [
    row.name,
    kb(row.bytes),
    kb(row.floor.bytes),
    `${row.floor.bytesRatio.toFixed(3)}x`,
    kb(row.lambdaFloor.bytes),
    `${row.lambdaFloor.bytesRatio.toFixed(3)}x`,
    ms(row.importMedianMs),
    ms(row.floor.importMedianMs),
    `${row.floor.importRatio.toFixed(3)}x`,
    ms(row.lambdaFloor.importMedianMs),
    `${row.lambdaFloor.importRatio.toFixed(3)}x`,
  ]),
);
const targets = targetLines(sizes.functions);
console.log(`\nTargets (against the default floor):\n${targets.lines.join('\n')}`);
console.log('\nBeyond the Lambda floor (bytes each source adds):');
for (const row of sizes.functions) console.log(`  ${row.name}: ${row.beyondFloor.map(([source, bytes]) => `${source} +${bytes}`).join(', ')}`);

const coldFunctions = sizes.cold.filter((row) => row.name !== 'floor' && row.name !== 'lambdaFloor' && !row.compileCache);
table(
  `Cold request: a fresh process imports the bundle and serves its first invocation against an instant stand-in DynamoDB ` +
    `(median of ${COLD_REQUESTS} each; the floors' of all ${COLD_REQUESTS * coldFunctions.length}, interleaved)`,
  ['bundle', 'import', 'first invocation', 'cold request', 'x floor cold', 'first x floor first', 'cold CPU', 'x floor CPU'],
  sizes.cold.map((row) => [
    row.name in FLOOR_LABELS ? FLOOR_LABELS[row.name as FloorName] : `${row.name}${row.compileCache ? ' + compile cache (not deployed)' : ''}`,
    ms(row.importMs),
    ms(row.firstMs),
    ms(row.coldMs),
    `${row.coldRatio.toFixed(3)}x`,
    `${row.firstRatio.toFixed(3)}x`,
    ms(row.coldCpuMs),
    `${row.coldCpuRatio.toFixed(3)}x`,
  ]),
);
const coldCheck = (what: string, limit: number, ratioOf: (row: ColdRow) => number) => {
  const missed = coldFunctions.filter((row) => ratioOf(row) > limit);
  const figures = coldFunctions.map((row) => `${row.name} ${ratioOf(row).toFixed(3)}x`).join(', ');
  console.log(`  ${what} <= ${limit.toFixed(2)}x the default floor's: ${missed.length === 0 ? 'MET by every function' : `NOT MET by ${missed.map((row) => row.name).join(', ')}`} (${figures})`);
  return missed.length === 0;
};
console.log('\nCold request targets:');
const coldMet = { coldRequest: coldCheck('cold request', TARGETS.coldRequest, (row) => row.coldRatio), firstInvocation: coldCheck('first invocation', TARGETS.firstInvocation, (row) => row.firstRatio) };

const latency = flags['cold-only'] ? [] : await warm();
if (latency.length > 0) table(
  `Warm, in-process on dynalite (${WARM_REQUESTS} requests each after ${WARM_UP} to warm up, interleaved with the raw call)`,
  ['case', 'raw p50', 'handler p50', 'ratio', 'raw p99', 'handler p99', 'ratio'],
  latency.map((row) => [row.case, ms(row.rawP50), ms(row.handlerP50), `${row.p50Ratio.toFixed(3)}x`, ms(row.rawP99), ms(row.handlerP99), `${row.p99Ratio.toFixed(3)}x`]),
);

const readCost = flags['cold-only'] ? [] : await statusIndexReadCost();
if (readCost.length > 0) table(
  `Status index read cost: full walks of one status, index items read per pet listed (default ${DEFAULT_STATUS_INDEX_SHARDS} shards; target <= 1.5, never above 2.0)`,
  ['shards', 'limit', 'pets', 'pages', 'items read', 'per pet', 'queries/page'],
  readCost.map((row) => [
    `${row.shards}${row.shards === DEFAULT_STATUS_INDEX_SHARDS ? ' (default)' : ''}`,
    String(row.limit),
    String(row.pets),
    String(row.pages),
    String(row.itemsRead),
    row.itemsPerPet.toFixed(3),
    (row.queries / row.pages).toFixed(2),
  ]),
);

const results = {
  date: started.toISOString(),
  node: process.version,
  platform: `${process.platform}/${process.arch}`,
  quick: Boolean(flags.quick),
  nodeOptions: FUNCTION_NODE_OPTIONS,
  launch: LAUNCH,
  coldImports: COLD_IMPORTS,
  warmRequests: WARM_REQUESTS,
  coldRequests: COLD_REQUESTS,
  targets: { ...TARGETS, met: { ...targets.met, ...coldMet } },
  floors: sizes.floors,
  bundles: sizes.functions,
  coldRequest: { standInTables: STAND_IN_TABLES, rows: sizes.cold },
  warm: latency,
  statusIndexReadCost: readCost,
};
mkdirSync(join(PROJECT_ROOT, 'bench'), { recursive: true });
writeFileSync(join(PROJECT_ROOT, 'tools', 'bench', 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
console.log('\nWritten to tools/bench/results.json.');
