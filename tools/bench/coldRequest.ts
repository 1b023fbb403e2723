/**
 * The cold request, as a user on a cold start waits for it: a fresh Node process imports a bundle
 * and serves its first invocation, against a stand-in DynamoDB on loopback that answers at once
 * with canned items, so what is timed is the process's own work (import, the SDK's one-time costs,
 * the code walked for the first time), not the store. `npm run bench` runs it per function,
 * interleaved with the floors' import + first call.
 *
 * The bundles run as on Lambda: credentials in the environment, no DYNAMODB_ENDPOINT (the SDK's
 * `AWS_ENDPOINT_URL_DYNAMODB` sends them to the stand-in, the floors alike), the keys' digests and
 * the operation's items read from the stand-in, over HTTPS as DynamoDB's endpoint is: the SDK
 * reaches plain HTTP through a dynamic `import('node:http')`, which builds that module's ES
 * namespace (Node's fetch and WebSocket stack, 15-40 ms) in any bundle that does not replace it, a
 * cost no function on Lambda pays. The stand-in's certificate, made by `openssl` for the run, is
 * trusted through NODE_EXTRA_CA_CERTS. A run whose calls did not reach the stand-in, or whose
 * answer is not the expected status, stops the bench: nothing is timed that went elsewhere.
 */
import { marshall } from '@aws-sdk/util-dynamodb';
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import {
  controlKeys,
  controlTable,
  petsTable,
  statusShardOf,
  DEFAULT_STATUS_INDEX_SHARDS,
} from '../../lib/store/table.ts';

const run = promisify(execFile);

export const STAND_IN_TABLES = { pets: 'bench-pets', control: 'bench-control' } as const;

/** The canned pets every read answers (fewer than a page, so a listing needs no cursor). */
const PETS = [1, 2, 3].map((n) => ({ id: 4_000_000 + n, name: `Pet ${n}`, categoryId: 1, status: 'available' }));
const petItem = (pet: (typeof PETS)[number]) => ({
  ...pet,
  [petsTable.statusIndex.partitionKey.name]: statusShardOf(pet.status, pet.id, DEFAULT_STATUS_INDEX_SHARDS),
  [petsTable.writeTokenAttribute]: 'bench-token',
});

export interface StandIn {
  endpoint: string;
  /** The stand-in's certificate (PEM file), for NODE_EXTRA_CA_CERTS. */
  certificate: string;
  /** DynamoDB operations answered so far (`Query`, `GetItem`...). */
  calls: string[];
  /** Queries of the control table (the API keys' read) answered so far. */
  keyReads: number;
  close(): Promise<void>;
}

/**
 * A DynamoDB JSON-protocol server answering each operation at once: Query of the control table
 * with one API key item (`keyItem`, digest of the bench's key), any other Query, Scan and GetItem
 * with the canned pets, PutItem and UpdateItem with `{}`.
 */
export async function startStandInDynamo(apiKeyItem: Record<string, unknown>): Promise<StandIn> {
  const calls: string[] = [];
  let keyReads = 0;
  const answer = (operation: string, input: { TableName?: string }): unknown => {
    const control = input.TableName === STAND_IN_TABLES.control;
    if (control && operation === 'Query') keyReads += 1;
    switch (operation) {
      case 'Query':
        return control
          ? { Items: [marshall(apiKeyItem)], Count: 1, ScannedCount: 1 }
          : { Items: PETS.map((p) => marshall(petItem(p))), Count: PETS.length, ScannedCount: PETS.length };
      case 'Scan':
        return { Items: PETS.map((p) => marshall(petItem(p))), Count: PETS.length, ScannedCount: PETS.length };
      case 'GetItem':
        return control
          ? {
              Item: marshall({
                [controlTable.partitionKey.name]: controlKeys.cursorSecret.pk,
                [controlTable.sortKey.name]: controlKeys.cursorSecret.sk,
                value: 'bench-cursor-secret-0123456789',
              }),
            }
          : { Item: marshall(petItem(PETS[0]!)) };
      case 'PutItem':
      case 'UpdateItem':
        return {};
      default:
        return undefined;
    }
  };
  const tls = loopbackCertificate();
  const server: Server = createServer(
    { key: readFileSync(tls.key), cert: readFileSync(tls.certificate) },
    (request: IncomingMessage, response: ServerResponse) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const operation = String(request.headers['x-amz-target'] ?? '').split('.')[1] ?? '';
        calls.push(operation);
        const body = answer(
          operation,
          JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { TableName?: string },
        );
        const status = body === undefined ? 400 : 200;
        const text = JSON.stringify(
          body ?? {
            __type: 'com.amazon.coral.validate#ValidationException',
            message: `The stand-in does not answer ${operation}`,
          },
        );
        response.writeHead(status, {
          'Content-Type': 'application/x-amz-json-1.0',
          'Content-Length': Buffer.byteLength(text),
          'x-amzn-RequestId': 'stand-in',
        });
        response.end(text);
      });
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `https://127.0.0.1:${port}`,
    certificate: tls.certificate,
    calls,
    get keyReads() {
      return keyReads;
    },
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dirname(tls.certificate), { recursive: true, force: true });
    },
  };
}

/** A key and a self-signed certificate for 127.0.0.1, valid for a day, made by `openssl` in a folder of their own. */
function loopbackCertificate(): { key: string; certificate: string } {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-stand-in-'));
  const [key, certificate] = [join(dir, 'key.pem'), join(dir, 'certificate.pem')];
  try {
    const subject = ['-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'];
    const newKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key];
    execFileSync('openssl', ['req', '-x509', ...newKey, '-days', '1', ...subject, '-out', certificate], {
      stdio: 'pipe',
    });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(
      `the stand-in DynamoDB needs openssl for its certificate: ${(error as Error).message.split('\n')[0]}`,
    );
  }
  return { key, certificate };
}

/** One cold request's figures, in milliseconds, measured inside the fresh process, and how that process ran (`launchReport`). */
export interface ColdSample extends LaunchReport {
  importMs: number;
  firstMs: number;
  /** The same phases in CPU time (user + system) of the process: steadier than wall time on a shared machine. */
  importCpuMs: number;
  firstCpuMs: number;
}

/**
 * How the bench starts each process it times: `node`'s own arguments, and the one CPU it is
 * confined to (none: any). The default is a plain `node` free to use every CPU.
 */
export interface ProcessLaunch {
  nodeArgs: readonly string[];
  cpu?: number | undefined;
}

export const PLAIN_LAUNCH: ProcessLaunch = { nodeArgs: [] };

/**
 * The arguments Lambda's Node.js runtime starts `node` with for a function of `memoryMiB`, unless
 * its NODE_OPTIONS sets the heap sizes: `--expose-gc` and the header limit always, a tenth of the
 * memory as the young generation (half of it the semi-space size) and the rest as old space. This
 * is the runtime's bootstrap script (`/var/runtime/bootstrap`) as public copies of the nodejs18.x
 * image show it; AWS does not document it, and a copy of the nodejs24.x one sizes the young
 * generation otherwise (docs/performance.md), so the bench uses it only when asked.
 */
export function lambdaNodeArgs(memoryMiB: number): string[] {
  const newSpace = Math.floor(memoryMiB / 10);
  return [
    '--expose-gc',
    '--max-http-header-size',
    '81920',
    `--max-semi-space-size=${Math.floor(newSpace / 2)}`,
    `--max-old-space-size=${memoryMiB - newSpace}`,
  ];
}

/** The command that starts `node` with `args` as `launch` says (confined by `taskset` to its CPU, if any). */
export function nodeCommand(launch: ProcessLaunch, args: readonly string[]): [string, string[]] {
  const node = [...launch.nodeArgs, ...args];
  return launch.cpu === undefined
    ? [process.execPath, node]
    : ['taskset', ['--cpu-list', String(launch.cpu), process.execPath, ...node]];
}

/** What a timed process reports of how it ran: node's own arguments, and the CPUs it may run on. */
export interface LaunchReport {
  execArgv: string[];
  /** Linux's `Cpus_allowed_list` of the process (`0-1`, `1`). */
  cpuList: string;
}

/** A JavaScript expression, for a timed process to evaluate after its timing: its `LaunchReport` (needs `require`). */
export const launchReport = `({
  execArgv: process.execArgv.filter((arg) => !arg.includes('\\n')),
  cpuList: require('node:fs').readFileSync('/proc/self/status', 'utf8').match(/^Cpus_allowed_list:\\s*(\\S+)$/m)?.[1] ?? '?',
})`;

/** Refuses a sample whose process did not run as `launch` says: its figures would be of another set-up. */
export function checkLaunch(file: string, launch: ProcessLaunch, seen: LaunchReport): void {
  const missing = launch.nodeArgs.filter((arg) => !seen.execArgv.includes(arg));
  if (missing.length > 0)
    throw new Error(
      `${file}: the process ran without ${missing.join(' ')} (its arguments: ${seen.execArgv.join(' ')})`,
    );
  if (launch.cpu !== undefined && seen.cpuList !== String(launch.cpu))
    throw new Error(`${file}: the process could run on CPUs ${seen.cpuList}, not on CPU ${launch.cpu} alone`);
}

/** What to invoke: the event, and the answer that proves it was served (a status code, or a floor's item). */
export interface Invocation {
  event: unknown;
  expect: (result: unknown) => boolean;
  /** How many times the first invocation reads the API keys (0 behind a fresh authorizer verdict). */
  keyReads: number;
}

/**
 * Console output as Lambda's Node.js runtime writes it (aws-lambda-nodejs-runtime-interface-client,
 * LogPatch): patched before the handler loads, each record formatted with util.format and written
 * with fs.writeSync to the log descriptor the runtime is given (_LAMBDA_TELEMETRY_LOG_FD), never
 * through process.stdout. Here the descriptor is a file the bench reads back, so a function's
 * request log line is written as on Lambda and proved written; Node's stdout stream, whose first use
 * costs a few milliseconds Lambda never pays, stays out of the timing. It runs after
 * `lambdaRuntimePrelude`, whose `require` it uses, as the runtime's LogPatch does.
 */
const lambdaConsole = `
const { openSync: __open, writeSync: __write } = require('node:fs');
const { format: __format } = require('node:util');
const __fd = __open(process.env.BENCH_LOG_FILE, 'a');
for (const [method, level] of Object.entries({ log: 'INFO', info: 'INFO', debug: 'DEBUG', warn: 'WARN', error: 'ERROR', trace: 'TRACE' })) {
  console[method] = (...args) => __write(__fd, new Date().toISOString() + '\\t' + 'bench-cold' + '\\t' + level + '\\t' + __format(...args).replace(/\\n/g, '\\r') + '\\n');
}
`;

/**
 * The Node built-ins Lambda's Node.js runtime has loaded before it imports the handler
 * (aws-lambda-nodejs-runtime-interface-client 3.3: its esbuild bundle's `createRequire` banner
 * loads `module`; RAPIDClient `http`; ResponseStream `net`; LogPatch and Errors `util` and `fs`;
 * UserFunction `path`; InvokeContext `assert`). The fresh process loads them before the clock
 * starts, as the runtime does (with `require`, which builds no ES module namespace: a bundle's own
 * `import` of one of them still pays for its namespace, as on Lambda), so neither the floors nor
 * the functions are charged for loading them.
 */
const LAMBDA_RUNTIME_PRELOADED = [
  'node:module',
  'node:http',
  'node:net',
  'node:util',
  'node:fs',
  'node:path',
  'node:assert',
] as const;

/**
 * The start of every fresh process the bench times (an ES module given with `--input-type=module`):
 * the runtime's own `createRequire` import, then its built-ins loaded with `require`.
 */
export const lambdaRuntimePrelude = `
import { createRequire } from 'node:module';
const require = createRequire(process.cwd() + '/');
for (const builtin of ${JSON.stringify(LAMBDA_RUNTIME_PRELOADED)}) require(builtin);
`;

/**
 * A JavaScript expression that loads the bundle `file` as Lambda's Node.js runtime does: an ES
 * module (`.mjs`) with `import()`, a CommonJS one (`.js`, `.cjs`) with `require` (after
 * `lambdaRuntimePrelude`, which defines it).
 */
export const loadHandlerModule = (file: string): string =>
  file.endsWith('.mjs')
    ? `await import(${JSON.stringify(pathToFileURL(file).href)})`
    : `require(${JSON.stringify(file)})`;

/**
 * The fresh process: times the import, then the first invocation, and prints both on its last line.
 * It times with `process.hrtime`, never `performance.now()`: the global `performance` loads Node's
 * perf_hooks on first use, which Lambda's runtime never does, so touching it here would pay that
 * cost in advance for any bundle that reads it. It exits at once (the SDK's keep-alive socket
 * would hold it open).
 */
const childScript = (file: string) => `
${lambdaRuntimePrelude}
${lambdaConsole}
const cpu = () => { const { user, system } = process.cpuUsage(); return (user + system) / 1000; };
const now = () => Number(process.hrtime.bigint()) / 1e6;
const started = now();
const startedCpu = cpu();
const { handler } = ${loadHandlerModule(file)};
const imported = now();
const importedCpu = cpu();
const context = { awsRequestId: 'bench-cold', functionName: 'bench', functionVersion: '$LATEST', memoryLimitInMB: '1024',
  invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:bench', logGroupName: 'bench', logStreamName: 'bench',
  callbackWaitsForEmptyEventLoop: true, getRemainingTimeInMillis: () => 10000, done() {}, fail() {}, succeed() {} };
const result = await handler(JSON.parse(process.env.BENCH_EVENT), context);
const answered = now();
const answeredCpu = cpu();
process.stdout.write('\\nCOLD ' + JSON.stringify({ importMs: imported - started, firstMs: answered - imported, importCpuMs: importedCpu - startedCpu, firstCpuMs: answeredCpu - importedCpu, ...${launchReport}, result }) + '\\n', () => process.exit(0));
`;

/** A fresh process's import + first invocation of `file`, with the functions' environment plus `env`. */
export async function coldRequest(
  file: string,
  invocation: Invocation,
  standIn: StandIn,
  env: Record<string, string>,
  launch: ProcessLaunch = PLAIN_LAUNCH,
): Promise<ColdSample> {
  const before = standIn.calls.length;
  const keyReadsBefore = standIn.keyReads;
  const logFile = join(mkdtempSync(join(tmpdir(), 'petstore-cold-')), 'log');
  const [command, args] = nodeCommand(launch, ['--input-type=module', '-e', childScript(file)]);
  const { stdout } = await run(command, args, {
    env: {
      PATH: process.env.PATH ?? '',
      NODE_NO_WARNINGS: '1',
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'AKIDBENCHCOLDSTART',
      AWS_SECRET_ACCESS_KEY: 'bench-secret',
      AWS_SESSION_TOKEN: 'bench-session',
      AWS_ENDPOINT_URL_DYNAMODB: standIn.endpoint,
      NODE_EXTRA_CA_CERTS: standIn.certificate,
      TABLE_NAME: STAND_IN_TABLES.pets,
      CONTROL_TABLE_NAME: STAND_IN_TABLES.control,
      STATUS_INDEX_SHARDS: String(DEFAULT_STATUS_INDEX_SHARDS),
      BENCH_EVENT: JSON.stringify(invocation.event),
      BENCH_LOG_FILE: logFile,
      ...env,
    },
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  });
  const line = stdout.split('\n').findLast((each) => each.startsWith('COLD '));
  if (!line) throw new Error(`${file}: the cold process printed no figures:\n${stdout}`);
  const { importMs, firstMs, importCpuMs, firstCpuMs, execArgv, cpuList, result } = JSON.parse(
    line.slice('COLD '.length),
  ) as ColdSample & { result: unknown };
  checkLaunch(file, launch, { execArgv, cpuList });
  if (standIn.calls.length === before)
    throw new Error(`${file}: the first invocation never reached the stand-in DynamoDB`);
  if (!invocation.expect(result))
    throw new Error(`${file}: unexpected answer to the first invocation: ${JSON.stringify(result)}`);
  const keyReads = standIn.keyReads - keyReadsBefore;
  if (keyReads !== invocation.keyReads)
    throw new Error(`${file}: the first invocation read the API keys ${keyReads} time(s), not ${invocation.keyReads}`);
  const log = readFileSync(logFile, 'utf8');
  rmSync(dirname(logFile), { recursive: true, force: true });
  if (
    typeof (result as { statusCode?: unknown } | null)?.statusCode === 'number' &&
    !log.includes('"message":"request"')
  ) {
    throw new Error(`${file}: the first invocation wrote no request log line through the console:\n${log}`);
  }
  return { importMs, firstMs, importCpuMs, firstCpuMs, execArgv, cpuList };
}
