/**
 * What each function's bundle contains, read from esbuild's metafile (deterministic: no timing).
 * Each function carries only what its route uses, reads its credentials from the environment only
 * (infra/bundle/credentialProvider.ts), takes Node's built-ins with `require`, and stays within the
 * byte budget of the default floor (tools/bench/floor.ts: one GetCommand through
 * DynamoDBDocumentClient, the SDK as published).
 */
import { isBuiltin } from 'node:module';
import { relative } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT, lambdaAliases } from '../../infra/bundle/bundling.ts';
import { routes } from '../../lib/domain/routes.ts';
import { beyondFloor, buildAllBundles, sourceOf, type BuiltBundle } from '../../tools/bench/bundles.ts';
import { TARGETS } from '../../tools/bench/targets.ts';

/**
 * The byte budget, against the default floor. It proves the aliases: without the
 * environment-only credential provider a function is about 1.06x; with it, about 0.6x. It also
 * catches a stray SDK client or library (tens of kB) once the margin is spent.
 */
const MAX_BYTES_RATIO = TARGETS.bytes;

let floor: BuiltBundle;
let lambdaFloor: BuiltBundle;
const bundles = new Map<string, BuiltBundle>();
beforeAll(async () => {
  const built = await buildAllBundles();
  floor = built.floor;
  lambdaFloor = built.lambdaFloor;
  for (const bundle of built.functions) bundles.set(bundle.name, bundle);
}, 60_000);

/**
 * The dynamic `import()`s of a built-in the bundles keep, each building that module's ES namespace
 * when reached, and none reached by a function on Lambda: the SDK's instance-metadata region lookup
 * (the region is always given), its HTTP handler's plain-HTTP agent (DynamoDB's endpoint is HTTPS;
 * only dynalite and the stage emulator's gate are plain HTTP), and the invoke store's
 * `node:async_hooks` (Lambda's multi-concurrency mode only). Any other fails the test: an ES
 * namespace of `node:http` loads Node's fetch and WebSocket stack, 15-40 ms of a cold start.
 */
const KNOWN_DYNAMIC_IMPORTS = [
  'node_modules/@smithy/core/dist-es/submodules/config/config-resolver/regionConfig/getInstanceMetadataRegion.js -> node:http',
  'node_modules/@aws/lambda-invoke-store/dist-es/invoke-store.js -> node:async_hooks',
  'node_modules/@smithy/node-http-handler/dist-es/node-http-handler.js -> node:http',
];

/** Every input the bundle keeps code of (esbuild lists tree-shaken inputs with 0 bytes). */
const keptInputs = (bundle: BuiltBundle) => Object.keys(bundle.inputs).filter((input) => bundle.inputs[input]! > 0);
const sources = (bundle: BuiltBundle) => new Set(keptInputs(bundle).map(sourceOf));

const BODY_PARSING = ['lib/http/jsonBody.ts', '@middy/http-json-body-parser'];
const CURSORS = ['lib/domain/pagination.ts', 'lib/store/cursorSecret.ts'];
// The deployed runner's tools are dev dependencies only: iam-simulate is AGPL-3.0 and never ships.
const NEVER = [
  '@aws-sdk/client-ssm',
  '@aws-sdk/client-secrets-manager',
  'zod',
  '@aws-sdk/client-sts',
  '@cloud-copilot/iam-simulate',
  'velocityjs',
];
/**
 * The SDK's default credential chain and what only it uses: never reached on Lambda, where the
 * credentials are in the environment. (`@aws-sdk/nested-clients` holds the STS and SSO clients.)
 */
const DEFAULT_CHAIN_ONLY = ['@aws-sdk/nested-clients', '@aws-sdk/token-providers', '@smithy/credential-provider-imds'];
const CREDENTIAL_PROVIDERS = '@aws-sdk/credential-provider-';
const ENVIRONMENT_PROVIDER = '@aws-sdk/credential-provider-env';
/** Event-stream support, which DynamoDB's JSON protocol never loads (replaced by infra/bundle/noEventStreams.ts). */
const EVENT_STREAMS = /node_modules\/@smithy\/core\/dist-es\/submodules\/event-streams\//;
const PROVIDER_FILE = 'infra/bundle/credentialProvider.ts';
const EVENT_STREAMS_STUB = 'infra/bundle/noEventStreams.ts';
/** The modules the bundles take in place of the aliased packages, as the metafile names them. */
const REPLACEMENTS = Object.values(lambdaAliases).map((file) => sourceOf(relative(PROJECT_ROOT, file)));

describe('lambdaAliases', () => {
  it('leave out only code the service never runs on Lambda: the default credential chain and event streams, each for a module of infra/bundle/', () => {
    expect(Object.keys(lambdaAliases).sort()).toEqual([
      '@aws-sdk/credential-provider-node',
      '@smithy/core/event-streams',
    ]);
    expect([...REPLACEMENTS].sort()).toEqual([PROVIDER_FILE, EVENT_STREAMS_STUB]);
  });
});

describe.each(routes.map((route) => [route.operation, route] as const))('the %s bundle', (operation, route) => {
  const bundle = () => bundles.get(operation)!;

  it('carries a body parser only for a route that takes a body', () => {
    const found = BODY_PARSING.filter((source) => sources(bundle()).has(source));
    expect(found).toEqual(route.method === 'GET' ? [] : BODY_PARSING);
  });

  it('carries cursor code only for a route that signs cursors', () => {
    const found = CURSORS.filter((source) => sources(bundle()).has(source));
    expect(found).toEqual(route.usesCursorSecret ? CURSORS : []);
  });

  it('carries no SDK client but DynamoDB, and no validation library', () => {
    const present = [...sources(bundle())];
    for (const never of NEVER)
      expect(
        present.filter((source) => source.startsWith(never)),
        never,
      ).toEqual([]);
    expect(present.filter((source) => source.startsWith('@aws-sdk/client-'))).toEqual(['@aws-sdk/client-dynamodb']);
  });

  it('reads credentials from the environment only: no other credential provider, no STS or SSO client', () => {
    const present = [...sources(bundle())];
    expect(present.filter((source) => source.startsWith(CREDENTIAL_PROVIDERS))).toEqual([ENVIRONMENT_PROVIDER]);
    for (const never of DEFAULT_CHAIN_ONLY)
      expect(
        present.filter((source) => source.startsWith(never)),
        never,
      ).toEqual([]);
    expect(present).toContain(PROVIDER_FILE);
  });

  it('takes every replacement module of lambdaAliases', () => {
    expect([...sources(bundle())]).toEqual(expect.arrayContaining(REPLACEMENTS));
  });

  it('takes each Node built-in with require, which builds no ES namespace: no ES import, no dynamic import but the known ones', () => {
    expect(bundle().format).toBe('cjs');
    expect(bundle().esImports).toEqual([]);
    expect(bundle().requires.length).toBeGreaterThan(0);
    expect(bundle().requires.filter((specifier) => !isBuiltin(specifier))).toEqual([]);
    expect([...bundle().dynamicImports].sort()).toEqual([...KNOWN_DYNAMIC_IMPORTS].sort());
  });

  it('takes every package from node_modules as installed: no input written by the build (a copy under node_modules/.cache)', () => {
    expect(Object.keys(bundle().inputs).filter((input) => input.includes('node_modules/.cache/'))).toEqual([]);
  });

  it("never reads the global performance: its first use loads perf_hooks, which Lambda's runtime has not", () => {
    expect(new TextDecoder().decode(bundle().code).match(/(?<![\w$.])performance\b/g) ?? []).toEqual([]);
  });

  it('carries no event-stream support, only the stub that throws if it is ever loaded', () => {
    expect(keptInputs(bundle()).filter((input) => EVENT_STREAMS.test(input))).toEqual([]);
    expect([...sources(bundle())]).toContain(EVENT_STREAMS_STUB);
  });

  it(`stays within ${MAX_BYTES_RATIO}x the default floor's bytes`, () => {
    const extra = beyondFloor(bundle(), lambdaFloor)
      .slice(0, 8)
      .map(([source, bytes]) => `${source} +${bytes}`)
      .join(', ');
    expect(
      bundle().bytes / floor.bytes,
      `${bundle().bytes} vs default floor ${floor.bytes}; beyond the Lambda floor: ${extra}`,
    ).toBeLessThanOrEqual(MAX_BYTES_RATIO);
  });
});

describe('the floors', () => {
  it('are the DynamoDB document client and nothing of ours', () => {
    for (const built of [floor, lambdaFloor]) {
      const present = [...sources(built)];
      expect(present, built.name).toContain('@aws-sdk/lib-dynamodb');
      expect(
        present.filter((source) => source.startsWith('lib/') || source.startsWith('@middy/')),
        built.name,
      ).toEqual([]);
    }
  });

  it("the default one is built the usual way: the SDK's whole default credential chain and event streams", () => {
    const present = [...sources(floor)];
    expect(present).toEqual(
      expect.arrayContaining([
        '@aws-sdk/credential-provider-node',
        '@aws-sdk/nested-clients',
        '@aws-sdk/credential-provider-ini',
      ]),
    );
    expect(keptInputs(floor).some((input) => EVENT_STREAMS.test(input))).toBe(true);
    expect(present.filter((source) => source.startsWith('infra/'))).toEqual([]);
  });

  it('the default one is an ES module that imports its built-ins as such, the Lambda one CommonJS that requires them', () => {
    expect(floor.format).toBe('esm');
    expect(floor.esImports).toEqual(expect.arrayContaining(['node:http', 'node:https', 'node:process', 'node:crypto']));
    expect(lambdaFloor.format).toBe('cjs');
    expect(lambdaFloor.esImports).toEqual([]);
    expect(lambdaFloor.requires).toEqual(expect.arrayContaining(['node:https', 'node:crypto']));
  });

  it('the Lambda one is built as the functions are: every alias applied', () => {
    const present = [...sources(lambdaFloor)];
    expect(present.filter((source) => source.startsWith(CREDENTIAL_PROVIDERS))).toEqual([ENVIRONMENT_PROVIDER]);
    expect(present).toEqual(expect.arrayContaining(REPLACEMENTS));
  });
});
