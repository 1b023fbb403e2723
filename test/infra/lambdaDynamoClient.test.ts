/**
 * The Lambda bundles' copy of the DynamoDB client package (infra/lambdaDynamoClient.ts): it
 * registers only the errors the service names, and a client built from it throws for every one of
 * DynamoDB's errors what the package as published throws (name, message, fault, status, a
 * `DynamoDBServiceException`), only without a class of its own for the errors no code of ours names.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../infra/bundling.ts';
import { REGISTERED_DYNAMODB_ERRORS, registeredDynamoErrors, withoutUnusedErrors } from '../../infra/lambdaDynamoClient.ts';
import { buildBundle, type BuiltBundle } from '../../tools/bench/bundles.ts';

const run = promisify(execFile);
const PROBE = 'test/infra/dynamoErrorProbe.ts';
const PUBLISHED_SCHEMAS = join(PROJECT_ROOT, 'node_modules', '@aws-sdk', 'client-dynamodb', 'dist-es', 'schemas', 'schemas_0.js');
const published = readFileSync(PUBLISHED_SCHEMAS, 'utf8');
const ALL_ERRORS = registeredDynamoErrors(published);

let dir: string;
let bundleFile: string;
let probeBundle: BuiltBundle;
let standIn: Server;
let endpoint: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'petstore-dynamo-errors-'));
  // Built with the functions' own options; the name only places the build's output, which is not written.
  probeBundle = await buildBundle('getPet', PROBE);
  bundleFile = join(dir, 'index.mjs');
  writeFileSync(bundleFile, probeBundle.code);
  // Answers every call with the error its table is named after, as DynamoDB's JSON protocol writes one.
  standIn = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const name = (JSON.parse(body) as { TableName: string }).TableName;
      response.writeHead(name === 'InternalServerError' ? 500 : 400, { 'Content-Type': 'application/x-amz-json-1.0' });
      response.end(JSON.stringify({ __type: `com.amazonaws.dynamodb.v20120810#${name}`, message: `${name} happened` }));
    });
  });
  await new Promise<void>((resolve) => standIn.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(standIn.address() as AddressInfo).port}`;
});

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await new Promise((resolve) => standIn?.close(resolve));
});

type Thrown = Record<string, { name: string; message: string; fault: string; status: number; serviceException: boolean; ownClass: boolean }>;

/** What a client throws for each of DynamoDB's errors, in a fresh process: the bundle's (the copy), or the source's (as published). */
async function thrown(how: 'bundle' | 'source'): Promise<Thrown> {
  const args = how === 'bundle' ? [bundleFile] : ['--import', 'tsx', PROBE];
  const { stdout } = await run(process.execPath, args, {
    cwd: PROJECT_ROOT,
    env: { PATH: process.env.PATH ?? '', NODE_NO_WARNINGS: '1', STAND_IN: endpoint, ERROR_NAMES: ALL_ERRORS.join(',') },
    encoding: 'utf8',
  });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as Thrown;
}

/** The project's own TypeScript under `folder`, as paths from the project root. */
const sourcesUnder = (folder: string): string[] =>
  readdirSync(join(PROJECT_ROOT, folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => join(folder, file));

describe("the Lambda bundles' DynamoDB client", () => {
  it("throws every DynamoDB error as the package as published does, with a class of its own only for those the service names", async () => {
    const [bundled, fromSource] = await Promise.all([thrown('bundle'), thrown('source')]);
    expect(Object.keys(fromSource)).toEqual(ALL_ERRORS);
    for (const name of ALL_ERRORS) {
      const { ownClass, ...rest } = bundled[name]!;
      const { ownClass: publishedOwnClass, ...publishedRest } = fromSource[name]!;
      expect(rest, name).toEqual(publishedRest);
      expect(rest, name).toMatchObject({ name, message: `${name} happened`, serviceException: true });
      expect(publishedOwnClass, name).toBe(true);
      expect(ownClass, name).toBe(REGISTERED_DYNAMODB_ERRORS.includes(name));
    }
  });

  it('is built from the copy, which registers only the errors the service names', () => {
    const inputs = Object.keys(probeBundle.inputs);
    const copies = inputs.filter((input) => input.endsWith('@aws-sdk/client-dynamodb/dist-es/schemas/schemas_0.js'));
    expect(copies).toHaveLength(1);
    expect(copies[0]).toMatch(/^node_modules\/\.cache\/petstore-lambda\//);
    expect(inputs.filter((input) => input.startsWith('node_modules/@aws-sdk/client-dynamodb/'))).toEqual([]);
    expect(registeredDynamoErrors(readFileSync(join(PROJECT_ROOT, copies[0]!), 'utf8'))).toEqual(
      ALL_ERRORS.filter((name) => REGISTERED_DYNAMODB_ERRORS.includes(name)),
    );
    // The client sends its version (in its user agent) from the copy's package.json; esbuild reads `sideEffects` there.
    const manifest = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    const { name, version, sideEffects } = manifest(join(PROJECT_ROOT, 'node_modules', '@aws-sdk', 'client-dynamodb', 'package.json'));
    expect(manifest(join(PROJECT_ROOT, copies[0]!, '..', '..', '..', 'package.json'))).toMatchObject({ name, version, sideEffects: false });
    expect(sideEffects).toBe(false);
  });

  it('keeps a class for exactly the DynamoDB errors that lib/ names', () => {
    const lib = sourcesUnder('lib').map((file) => readFileSync(join(PROJECT_ROOT, file), 'utf8')).join('\n');
    const named = ALL_ERRORS.filter((name) => new RegExp(`\\b${name}\\b`).test(lib));
    expect([...REGISTERED_DYNAMODB_ERRORS].sort()).toEqual(named.sort());
  });

  it('fails the build when the package registers its errors otherwise', () => {
    expect(ALL_ERRORS.length).toBeGreaterThan(REGISTERED_DYNAMODB_ERRORS.length);
    expect(() => withoutUnusedErrors(published.replaceAll('n0_registry.registerError(', 'registry.registerError('))).toThrow(/does not register ConditionalCheckFailedException/);
    expect(() => withoutUnusedErrors(published, [...REGISTERED_DYNAMODB_ERRORS, 'NoSuchError'])).toThrow(/does not register NoSuchError/);
  });
});
