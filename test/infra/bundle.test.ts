/**
 * The one test that bundles for real: CDK synthesizes PetStore-staging, NodejsFunction runs the
 * local esbuild with the options of infra/bundle/bundling.ts, and the bundles it wrote into the cloud
 * assembly are imported here and run against dynalite, as Lambda would run them: in this process,
 * and in a child Node 22 process with Lambda's environment (credentials in `AWS_*` variables,
 * keys and cursor secret in the control table), through every DynamoDB operation the functions use.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import dynalite from 'dynalite';
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { isBuiltin } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BUNDLE_FILE, PROJECT_ROOT } from '../../infra/bundle/bundling.ts';
import { NO_ENVIRONMENT_CREDENTIALS } from '../../infra/bundle/credentialProvider.ts';
import { digestKey } from '../../lib/domain/apiKeys.ts';
import { keyItem } from '../../lib/store/controlTableKeys.ts';
import { createDocumentClient } from '../../lib/store/dynamo.ts';
import { routes, type OperationName } from '../../lib/domain/routes.ts';
import { TEST_API_KEY, freshEnvironment, useEmbeddedStore } from '../support/store.ts';
import { synthesize, testApp } from './synth.ts';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

const endpoint = useEmbeddedStore();
let outdir: string;
const bundles = new Map<OperationName, string>();

beforeAll(() => {
  outdir = mkdtempSync(join(tmpdir(), 'petstore-cdk-'));
  const { app, stacks } = testApp({ outdir, stages: ['staging'], bundle: ['PetStore-staging'] });
  app.synth();
  const s = synthesize(stacks.get('staging')!);
  for (const route of routes) {
    const { fn } = s.stack.functions.get(route.operation);
    const metadata = s.resource(s.logicalId(fn)).Metadata as Record<string, string>;
    // The asset metadata SAM reads: the bundle's folder in the cloud assembly.
    expect(metadata['aws:asset:property']).toBe('Code');
    expect(metadata['aws:asset:is-bundled']).toBe(true);
    bundles.set(route.operation, join(outdir, metadata['aws:asset:path']!, BUNDLE_FILE));
  }
}, 120_000);

afterAll(() => rmSync(outdir, { recursive: true, force: true }));

const savedEnv = { ...process.env };
afterEach(() => {
  for (const key of Object.keys(process.env)) if (!(key in savedEnv)) delete process.env[key];
  Object.assign(process.env, savedEnv);
});

/**
 * The bundle, imported in this process. (Vitest's runner rewrites its import/export statements on
 * the way in; the code itself runs as bundled.)
 */
const importFile = (file: string): Promise<unknown> => import(/* @vite-ignore */ pathToFileURL(file).href);

/**
 * `import ... from "x"` / `import "x"` at a statement boundary (not inside a string), minified too:
 * `import{a as b}from"x"` has no space before `from`.
 */
const STATIC_IMPORT = /(?:^|[;}\n])\s*import\s*(?:[^;'"]*?[\s}*]from\s*)?["']([^"']+)["']/g;
const DYNAMIC_IMPORT = /\bimport\(\s*["']([^"']+)["']\s*\)/g;
const REQUIRE = /\brequire\(\s*["']([^"']+)["']\s*\)/g;

const bundleOf = (operation: OperationName): string => {
  const file = bundles.get(operation);
  if (!file) throw new Error(`no bundle for ${operation}`);
  return file;
};

interface EventInit {
  body?: unknown;
  query?: Record<string, string>;
  pathParameters?: Record<string, string>;
  headers?: Record<string, string>;
}

function proxyEvent(method: string, path: string, init: EventInit = {}): APIGatewayProxyEvent {
  const headers: Record<string, string> = {
    Authorization: `Bearer ${TEST_API_KEY}`,
    Host: 'api.example.test',
    'X-Forwarded-Proto': 'https',
    ...(init.body === undefined ? {} : { 'Content-Type': 'application/json' }),
    ...init.headers,
  };
  return {
    httpMethod: method,
    path,
    resource: path,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
    queryStringParameters: init.query ?? null,
    multiValueQueryStringParameters: init.query
      ? Object.fromEntries(Object.entries(init.query).map(([k, v]) => [k, [v]]))
      : null,
    pathParameters: init.pathParameters ?? null,
    stageVariables: null,
    body: init.body === undefined ? null : JSON.stringify(init.body),
    isBase64Encoded: false,
    requestContext: {
      accountId: '123456789012',
      apiId: 'test',
      authorizer: null,
      protocol: 'HTTP/1.1',
      httpMethod: method,
      identity: { sourceIp: '127.0.0.1' } as APIGatewayProxyEvent['requestContext']['identity'],
      path: `/v1${path}`,
      stage: 'v1',
      requestId: `test-${Math.random().toString(36).slice(2)}`,
      requestTimeEpoch: Date.now(),
      resourceId: 'test',
      resourcePath: path,
    },
  };
}

function context(functionName: string): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: `req-${Math.random().toString(36).slice(2)}`,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'test',
    getRemainingTimeInMillis: () => 10_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

describe('the CDK-bundled functions', () => {
  it('are minified CommonJS bundles (index.js) with no source map (npm run build writes those)', () => {
    for (const route of routes) {
      const file = bundleOf(route.operation);
      expect(file.endsWith('/index.js')).toBe(true);
      const code = readFileSync(file, 'utf8');
      expect(code.startsWith('"use strict";'), route.operation).toBe(true);
      expect(code).not.toContain('sourceMappingURL');
      expect(existsSync(`${file}.map`)).toBe(false);
      // The AWS SDK is bundled, not left to the runtime: every module still loaded is a Node built-in.
      // (The bundles also run below from a temporary folder with no node_modules above it.)
      const required = [...code.matchAll(REQUIRE)].map((m) => m[1]!);
      expect(required.length).toBeGreaterThan(0);
      for (const specifier of required) expect(isBuiltin(specifier), specifier).toBe(true);
      // No ES import: require() builds no ES namespace, an import of node:http builds one that loads
      // Node's fetch and WebSocket stack (15-40 ms of a cold start). The SDK's dynamic imports run only
      // off Lambda's path: node:http for a plain-HTTP endpoint, node:async_hooks in multi-concurrency mode.
      expect(
        [...code.matchAll(STATIC_IMPORT)].map((m) => m[1]!),
        route.operation,
      ).toEqual([]);
      expect([...new Set([...code.matchAll(DYNAMIC_IMPORT)].map((m) => m[1]!))].sort(), route.operation).toEqual([
        'node:async_hooks',
        'node:http',
      ]);
      // Minified: a few long lines, not one statement per line.
      expect(code.split('\n').length).toBeLessThan(100);
    }
  });

  it('create a pet and list it back on dynalite, run exactly as bundled', async () => {
    const env = await freshEnvironment(endpoint());
    Object.assign(process.env, env, { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' });
    expect(outdir.startsWith(PROJECT_ROOT)).toBe(false);

    const { handler: createPet } = (await importFile(bundleOf('createPet'))) as { handler: Handler };
    const { handler: listPets } = (await importFile(bundleOf('listPets'))) as { handler: Handler };

    const newPet = { name: 'Rex', categoryId: 7, status: 'available' };
    const created = await createPet(proxyEvent('POST', '/pets', { body: newPet }), context('createPet'));
    expect(created.statusCode, created.body).toBe(201);
    const pet = JSON.parse(created.body) as { id: number };
    expect(pet).toEqual({ id: expect.any(Number), ...newPet });
    expect(created.headers?.Location).toBe(`/v1/pets/${pet.id}`);
    expect(created.headers?.['Content-Type']).toBe('application/json');

    const listed = await listPets(proxyEvent('GET', '/pets', { query: { status: 'available' } }), context('listPets'));
    expect(listed.statusCode, listed.body).toBe(200);
    expect(JSON.parse(listed.body)).toEqual([pet]);

    const unauthorized = await listPets(
      { ...proxyEvent('GET', '/pets'), headers: {}, multiValueHeaders: {} },
      context('listPets'),
    );
    expect(unauthorized.statusCode).toBe(401);
    expect(JSON.parse(unauthorized.body)).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
  });
});

/**
 * A Node 22 process that imports bundles and runs their handlers, one request a line on stdin,
 * one answer a line on fd 3 (stdout carries the request log, stderr the warnings and errors).
 * Its environment is exactly `env`: nothing of this process's leaks into it.
 */
const HOST_SCRIPT = `
import { writeSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
const handlers = new Map();
for await (const line of createInterface({ input: process.stdin })) {
  const { file, event, context } = JSON.parse(line);
  if (!handlers.has(file)) handlers.set(file, (await import(pathToFileURL(file).href)).handler);
  const answer = await handlers.get(file)(event, { ...context, getRemainingTimeInMillis: () => 10000 });
  writeSync(3, JSON.stringify(answer) + '\\n');
}
process.exit(0);
`;

class BundleHost {
  readonly #child: ChildProcessByStdio<Writable, null, Readable>;
  readonly #answers: AsyncIterator<string>;
  #stderr = '';

  constructor(env: Record<string, string>) {
    this.#child = spawn(
      join(PROJECT_ROOT, 'node_modules', '.bin', 'node'),
      ['--input-type=module', '-e', HOST_SCRIPT],
      {
        env,
        stdio: ['pipe', 'ignore', 'pipe', 'pipe'],
      },
    ) as unknown as ChildProcessByStdio<Writable, null, Readable>;
    this.#child.stderr.on('data', (chunk: Buffer) => (this.#stderr += chunk.toString()));
    this.#answers = createInterface({ input: this.#child.stdio[3] as Readable })[Symbol.asyncIterator]();
  }

  async call(operation: OperationName, event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> {
    const { getRemainingTimeInMillis: _, ...plainContext } = context(operation);
    this.#child.stdin.write(`${JSON.stringify({ file: bundleOf(operation), event, context: plainContext })}\n`);
    const answer = await this.#answers.next();
    if (answer.done) throw new Error(`the bundle host exited: ${this.#stderr}`);
    return JSON.parse(answer.value) as APIGatewayProxyResult;
  }

  /** Ends the process; its stderr, one JSON log line per line. */
  async close(): Promise<Record<string, unknown>[]> {
    const running = this.#child.exitCode === null && this.#child.signalCode === null;
    const exited = running ? new Promise((resolve) => this.#child.once('exit', resolve)) : Promise.resolve();
    this.#child.stdin.end();
    await exited;
    return this.#stderr
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  }
}

/** A DynamoDB request as dynalite received it. */
interface Received {
  operation: string;
  authorization: string;
  securityToken: string | undefined;
}

describe('the CDK-bundled functions, run as on Lambda', () => {
  const ACCESS_KEY_ID = 'AKIDLAMBDAENVIRONMENT';
  const SESSION_TOKEN = 'session-token-from-lambda';
  let server: Server;
  let endpoint: string;
  const received: Received[] = [];
  let home: string;

  beforeAll(async () => {
    server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 }) as Server;
    server.on('request', (request: { headers: Record<string, string | undefined> }) => {
      received.push({
        operation: (request.headers['x-amz-target'] ?? '').replace(/^DynamoDB_\d+\./, ''),
        authorization: request.headers.authorization ?? '',
        securityToken: request.headers['x-amz-security-token'],
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    home = mkdtempSync(join(tmpdir(), 'petstore-lambda-home-'));
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    rmSync(home, { recursive: true, force: true });
  });

  /**
   * Lambda's environment for a new pair of tables, API key in the control table. The endpoint
   * comes from the SDK's own `AWS_ENDPOINT_URL_DYNAMODB`, not `DYNAMODB_ENDPOINT` (with which
   * lib/service.ts would pass local credentials and never ask the provider). No shared config
   * file, no instance metadata: were the SDK's default chain ever bundled again, it finds nothing
   * and reaches no network.
   */
  async function lambdaEnvironment(credentials: Record<string, string>): Promise<Record<string, string>> {
    const { TABLE_NAME, CONTROL_TABLE_NAME } = (await freshEnvironment(endpoint)) as Record<string, string>;
    const documents = createDocumentClient({ endpoint });
    await documents.send(
      new PutCommand({
        TableName: CONTROL_TABLE_NAME,
        Item: keyItem({
          keyId: 'bundletest01',
          sha256: digestKey(TEST_API_KEY).toString('hex'),
          createdAt: new Date().toISOString(),
        }),
      }),
    );
    documents.destroy();
    received.length = 0;
    return {
      PATH: process.env.PATH ?? '',
      HOME: home,
      AWS_CONFIG_FILE: join(home, 'no-config'),
      AWS_SHARED_CREDENTIALS_FILE: join(home, 'no-credentials'),
      AWS_EC2_METADATA_DISABLED: 'true',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      AWS_REGION: 'us-east-1',
      AWS_ENDPOINT_URL_DYNAMODB: endpoint,
      TABLE_NAME: TABLE_NAME!,
      CONTROL_TABLE_NAME: CONTROL_TABLE_NAME!,
      ...credentials,
    };
  }

  let host: BundleHost | undefined;
  afterEach(async () => {
    await host?.close();
    host = undefined;
  });

  it('sign every DynamoDB operation the functions use with the credentials in the environment', async () => {
    host = new BundleHost(
      await lambdaEnvironment({
        AWS_ACCESS_KEY_ID: ACCESS_KEY_ID,
        AWS_SECRET_ACCESS_KEY: 'secret-from-lambda',
        AWS_SESSION_TOKEN: SESSION_TOKEN,
      }),
    );
    const rex = { name: 'Rex', categoryId: 7, status: 'available' };
    const idempotent = { 'Idempotency-Key': 'bundle-test-0001' };

    const created = await host.call('createPet', proxyEvent('POST', '/pets', { body: rex, headers: idempotent }));
    expect(created.statusCode, created.body).toBe(201);
    const pet = JSON.parse(created.body) as { id: number };
    const replayed = await host.call('createPet', proxyEvent('POST', '/pets', { body: rex, headers: idempotent }));
    expect(replayed.statusCode, replayed.body).toBe(201);
    expect(replayed.headers?.['Idempotent-Replayed']).toBe('true');
    expect(JSON.parse(replayed.body)).toEqual(pet);
    const second = await host.call('createPet', proxyEvent('POST', '/pets', { body: { ...rex, name: 'Tom' } }));
    expect(second.statusCode, second.body).toBe(201);
    // middy's parser refuses it with an HttpError named from node:http's STATUS_CODES;
    // any other failure in the parser would be answered as invalid JSON, without the field.
    const protoKey = await host.call('createPet', {
      ...proxyEvent('POST', '/pets', { body: rex }),
      body: '{"name":"Rex","categoryId":1,"__proto__":{}}',
    });
    expect(protoKey.statusCode, protoKey.body).toBe(400);
    expect(JSON.parse(protoKey.body)).toMatchObject({
      code: 'VALIDATION_FAILED',
      message: "Invalid body: unknown field '__proto__'.",
    });

    const got = await host.call(
      'getPet',
      proxyEvent('GET', `/pets/${pet.id}`, { pathParameters: { petId: String(pet.id) } }),
    );
    expect(got.statusCode, got.body).toBe(200);
    expect(JSON.parse(got.body)).toEqual(pet);

    // A page of one under a status (Query, and the cursor secret kept in the control table), then the next page.
    const first = await host.call(
      'listPets',
      proxyEvent('GET', '/pets', { query: { status: 'available', limit: '1' } }),
    );
    expect(first.statusCode, first.body).toBe(200);
    const next = /<([^>]+)>; rel="next"/.exec(String(first.headers?.Link))?.[1];
    expect(next, String(first.headers?.Link)).toBeDefined();
    const cursor = new URL(next!, 'https://api.example.test').searchParams.get('cursor')!;
    const rest = await host.call(
      'listPets',
      proxyEvent('GET', '/pets', { query: { status: 'available', limit: '1', cursor } }),
    );
    expect(rest.statusCode, rest.body).toBe(200);
    const scanned = await host.call('listPets', proxyEvent('GET', '/pets', { query: { limit: '5' } }));
    expect(scanned.statusCode, scanned.body).toBe(200);
    const names = (body: string) => (JSON.parse(body) as { name: string }[]).map((p) => p.name);
    expect([...names(first.body), ...names(rest.body)].sort()).toEqual(['Rex', 'Tom']);
    expect(names(scanned.body).sort()).toEqual(['Rex', 'Tom']);

    // Every operation the routes are granted, and the control table's, went out through the bundles.
    const operations = new Set(received.map((request) => request.operation));
    expect([...operations].sort()).toEqual(['GetItem', 'PutItem', 'Query', 'Scan', 'UpdateItem']);
    for (const route of routes)
      for (const access of route.tableAccess) expect(operations).toContain(access.replace('dynamodb:', ''));
    // ...each one signed with the environment's credentials.
    for (const request of received) {
      expect(request.authorization).toMatch(
        new RegExp(`^AWS4-HMAC-SHA256 Credential=${ACCESS_KEY_ID}/\\d{8}/us-east-1/dynamodb/aws4_request`),
      );
      expect(request.securityToken).toBe(SESSION_TOKEN);
    }
  });

  it.each<{ keys: string; extra: Record<string, string>; status: number; code: string }>([
    // An API-key store that cannot be read is a 503 (lib/http/auth.ts), its cause logged.
    { keys: 'in the control table, as deployed', extra: {}, status: 503, code: 'SERVICE_UNAVAILABLE' },
    { keys: 'in PETSTORE_API_KEYS', extra: { PETSTORE_API_KEYS: TEST_API_KEY }, status: 500, code: 'INTERNAL' },
  ])(
    'without credentials in the environment (keys $keys), fail the first DynamoDB call saying so',
    async ({ extra, status, code }) => {
      host = new BundleHost({ ...(await lambdaEnvironment({})), ...extra });
      const answer = await host.call('getPet', proxyEvent('GET', '/pets/1', { pathParameters: { petId: '1' } }));
      expect(answer.statusCode, answer.body).toBe(status);
      expect(JSON.parse(answer.body)).toMatchObject({ code, status });
      expect(answer.body).not.toContain('credentials');

      const logged = await host.close();
      host = undefined;
      const errors = logged.filter((line) => line.level === 'ERROR');
      expect(errors, JSON.stringify(logged)).toEqual([
        expect.objectContaining({
          operation: 'getPet',
          name: 'CredentialsProviderError',
          message: NO_ENVIRONMENT_CREDENTIALS,
        }),
      ]);
      // Refused before any request left: nothing reached the store.
      expect(received).toEqual([]);
    },
  );
});
