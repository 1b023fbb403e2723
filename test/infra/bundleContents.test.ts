/**
 * What each function's bundle contains, read from esbuild's metafile (deterministic: no timing).
 * Each function carries only what its route uses, and stays within its byte budget of the floor
 * (bench/floor.ts: one GetCommand through DynamoDBDocumentClient, built with the same options).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../lib/domain/routes.ts';
import { beyondFloor, buildAllBundles, sourceOf, type BuiltBundle } from '../../scripts/bundles.ts';

/**
 * A ceiling that catches a regression (a stray SDK client or library is tens of kB). The issue's
 * target is 1.05x; with middy, the pipeline the service is built on (about 4.5 kB), and idempotent
 * creates, the functions stand at about 1.06-1.08x: README "Speed and size" has the figures and
 * what would close the gap.
 */
const MAX_BYTES_RATIO = 1.1;

let floor: BuiltBundle;
const bundles = new Map<string, BuiltBundle>();
beforeAll(async () => {
  const built = await buildAllBundles();
  floor = built.floor;
  for (const bundle of built.functions) bundles.set(bundle.name, bundle);
}, 60_000);

const sources = (bundle: BuiltBundle) => new Set(Object.keys(bundle.inputs).filter((input) => bundle.inputs[input]! > 0).map(sourceOf));

const BODY_PARSING = ['lib/http/jsonBody.ts', '@middy/http-json-body-parser'];
const CURSORS = ['lib/domain/pagination.ts', 'lib/store/cursorSecret.ts'];
const NEVER = ['@aws-sdk/client-ssm', '@aws-sdk/client-secrets-manager', 'zod', '@aws-sdk/client-sts'];

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
    for (const never of NEVER) expect(present.filter((source) => source.startsWith(never)), never).toEqual([]);
    expect(present.filter((source) => source.startsWith('@aws-sdk/client-'))).toEqual(['@aws-sdk/client-dynamodb']);
  });

  it(`stays within ${MAX_BYTES_RATIO}x the floor's bytes`, () => {
    const extra = beyondFloor(bundle(), floor)
      .slice(0, 8)
      .map(([source, bytes]) => `${source} +${bytes}`)
      .join(', ');
    expect(bundle().bytes / floor.bytes, `${bundle().bytes} vs floor ${floor.bytes}: ${extra}`).toBeLessThanOrEqual(MAX_BYTES_RATIO);
  });
});

it('builds the floor from the same options: the DynamoDB document client and nothing of ours', () => {
  const present = [...sources(floor)];
  expect(present).toContain('@aws-sdk/lib-dynamodb');
  expect(present.filter((source) => source.startsWith('lib/') || source.startsWith('@middy/'))).toEqual([]);
});
