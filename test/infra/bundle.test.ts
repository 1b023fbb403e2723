/**
 * The one test that bundles for real: CDK synthesizes PetStore-staging, NodejsFunction runs the
 * local esbuild with the options of infra/bundling.ts, and the bundles it wrote into the cloud
 * assembly are imported here and run against dynalite, as Lambda would run them.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BUNDLE_FILE, ESM_REQUIRE_BANNER, PROJECT_ROOT } from '../../infra/bundling.ts';
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
    const fn = s.stack.functions.get(route.operation)!;
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

/** `import ... from "x"` / `import "x"` at a statement boundary (not inside a string). */
const STATIC_IMPORT = /(?:^|[;}\n])\s*import\s*(?:[^;'"]*?\sfrom\s*)?["']([^"']+)["']/g;
const DYNAMIC_IMPORT = /\bimport\(\s*["']([^"']+)["']\s*\)/g;

const bundleOf = (operation: OperationName): string => {
  const file = bundles.get(operation);
  if (!file) throw new Error(`no bundle for ${operation}`);
  return file;
};

function proxyEvent(method: string, path: string, init: { body?: unknown; query?: Record<string, string> } = {}): APIGatewayProxyEvent {
  const headers: Record<string, string> = {
    Authorization: `Bearer ${TEST_API_KEY}`,
    Host: 'api.example.test',
    'X-Forwarded-Proto': 'https',
    ...(init.body === undefined ? {} : { 'Content-Type': 'application/json' }),
  };
  return {
    httpMethod: method,
    path,
    resource: path,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
    queryStringParameters: init.query ?? null,
    multiValueQueryStringParameters: init.query ? Object.fromEntries(Object.entries(init.query).map(([k, v]) => [k, [v]])) : null,
    pathParameters: null,
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
  it('are minified ESM bundles (index.mjs) with the require banner and no source map (npm run build writes those)', () => {
    for (const route of routes) {
      const file = bundleOf(route.operation);
      const code = readFileSync(file, 'utf8');
      expect(code.startsWith(ESM_REQUIRE_BANNER), route.operation).toBe(true);
      expect(code).not.toContain('sourceMappingURL');
      expect(existsSync(`${file}.map`)).toBe(false);
      // The AWS SDK is bundled, not left to the runtime: every module still imported is a Node built-in.
      // (The bundles also run below from a temporary folder with no node_modules above it.)
      const imported = [...code.matchAll(STATIC_IMPORT), ...code.matchAll(DYNAMIC_IMPORT)].map((m) => m[1]!);
      expect(imported.length).toBeGreaterThan(0);
      for (const specifier of imported) expect(isBuiltin(specifier), specifier).toBe(true);
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

    const unauthorized = await listPets({ ...proxyEvent('GET', '/pets'), headers: {}, multiValueHeaders: {} }, context('listPets'));
    expect(unauthorized.statusCode).toBe(401);
    expect(JSON.parse(unauthorized.body)).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
  });
});
