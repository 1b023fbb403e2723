/**
 * The deployed bundles carry only the environment's credential provider (infra/bundle/credentialProvider.ts).
 * Proof that they sign correctly, not just that they load: a deployed function (its cdk.out asset, in
 * its own process, as Lambda runs it) talks to a stand-in for DynamoDB (the deployed runner's IAM gate)
 * that recomputes the SigV4 signature of every request from the credentials it expects, and refuses a
 * request that is unsigned, signed with other credentials or without the session token.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readStack, type StackArtifact } from '../../tools/stage-emulator/src/cloudAssembly.ts';
import { ensureCloudAssembly } from '../../tools/stage-emulator/src/freshAssembly.ts';
import {
  rolePolicies,
  startIamGate,
  type GateCredentials,
  type IamGate,
} from '../../tools/stage-emulator/src/iamGate.ts';
import { OFFLINE_ENVIRONMENT, TemplateResolver } from '../../tools/stage-emulator/src/intrinsics.ts';
import { LambdaFunctionHost } from '../../tools/stage-emulator/src/lambdaHost.ts';
import { createTablesFromTemplate, type TableKeys } from '../../tools/stage-emulator/src/tables.ts';
import { startEmbeddedStore, type EmbeddedStore } from '../../local/embeddedStore.ts';
import { runKeys } from '../../tools/keys/keys.ts';
import { DEFAULT_OUTDIR, STAGE_APP } from '../../local/stageApp.ts';

const credentials = (): GateCredentials => ({
  accessKeyId: `ASIA${randomBytes(8).toString('hex').toUpperCase()}`,
  secretAccessKey: randomBytes(30).toString('base64'),
  sessionToken: randomBytes(48).toString('base64'),
});

let stack: StackArtifact;
let resolver: TemplateResolver;
let store: EmbeddedStore;
let tables: TableKeys[];
let apiKey: string;
const running: { gate?: IamGate; host?: LambdaFunctionHost } = {};

beforeAll(async () => {
  await ensureCloudAssembly(DEFAULT_OUTDIR, STAGE_APP, { quiet: true });
  stack = readStack(DEFAULT_OUTDIR, 'PetStore-staging');
  resolver = new TemplateResolver(stack, OFFLINE_ENVIRONMENT);
  store = await startEmbeddedStore();
  tables = await createTablesFromTemplate(store.endpoint, stack.template, resolver);
  const control = tables.find((table) => table.partitionKey === 'pk')!.tableName;
  const out: string[] = [];
  await runKeys(['create', '--stage', 'staging', '--table', control, '--endpoint', store.endpoint], {
    out: (line) => out.push(line),
    err: (line) => out.push(line),
    env: { AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'operator', AWS_SECRET_ACCESS_KEY: 'operator' },
  });
  apiKey = out.join('\n').match(/psk_\w{12}_[\w-]{43}/)![0];
}, 180_000);

afterEach(async () => {
  await running.host?.close();
  await running.gate?.close();
});
afterAll(() => store?.close());

/** getPet's deployed bundle, signing with `given`, behind a gate that expects `expected`; asks for a pet no one has. */
async function getUnknownPet(expected: GateCredentials, given: GateCredentials) {
  const [fnId, fn] = Object.entries(stack.template.Resources).find(
    ([id, r]) => r.Type === 'AWS::Lambda::Function' && id.startsWith('GetPet'),
  )!;
  const roleId = (fn.Properties!.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
  const functionName = resolver.ref(fnId);
  running.gate = await startIamGate({
    upstream: store.endpoint,
    roleArn: resolver.getAtt(roleId, 'Arn'),
    sessionName: functionName,
    policies: rolePolicies(stack.template, resolver, roleId),
    tables,
    credentials: expected,
  });
  const gate = running.gate;
  running.host = new LambdaFunctionHost({
    functionName,
    assetDir: stack.assetDir(fnId),
    handler: String(fn.Properties!.Handler),
    runtime: String(fn.Properties!.Runtime),
    memoryMiB: Number(fn.Properties!.MemorySize),
    timeoutSeconds: Number(fn.Properties!.Timeout),
    region: OFFLINE_ENVIRONMENT.region,
    environment: resolver.resolve((fn.Properties!.Environment as { Variables: unknown }).Variables) as Record<
      string,
      string
    >,
    credentials: given,
    endpointOverrides: { AWS_ENDPOINT_URL_DYNAMODB: gate.endpoint },
    invokedFunctionArn: `${resolver.getAtt(fnId, 'Arn')}:live`,
    functionVersion: '1',
    logGroupName: `/aws/lambda/${functionName}`,
    log: () => undefined,
  });
  const host = running.host;
  const event = JSON.parse(readFileSync(new URL('../../events/getPet.json', import.meta.url), 'utf8'));
  event.headers.Authorization = `Bearer ${apiKey}`;
  event.multiValueHeaders.Authorization = [`Bearer ${apiKey}`];
  event.pathParameters = { petId: '424242' };
  const outcome = await host.invoke(event);
  if (outcome.kind !== 'ok') throw new Error(`the function failed: ${JSON.stringify(outcome)}`);
  const result = outcome.payload as { statusCode: number; body: string };
  return {
    status: result.statusCode,
    code: (JSON.parse(result.body) as { code: string }).code,
    signatures: gate.signatures,
  };
}

describe("a deployed bundle signs every DynamoDB call with the environment's credentials", () => {
  it('every request verified with the expected credentials: the API keys read and the pet looked up', async () => {
    const expected = credentials();
    const answer = await getUnknownPet(expected, expected);
    expect(answer).toMatchObject({ status: 404, code: 'NOT_FOUND' });
    expect(answer.signatures.refused).toEqual([]);
    expect(answer.signatures.verified).toBeGreaterThanOrEqual(2); // Query of the API keys, GetItem of the pet
  });

  it('signed with other credentials: refused, never forwarded, and the client gets a 503', async () => {
    const answer = await getUnknownPet(credentials(), credentials());
    expect(answer).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE' });
    expect(answer.signatures.verified).toBe(0);
    expect(answer.signatures.refused.map((r) => r.type)).toContain('UnrecognizedClientException');
  });

  it('the right access key with another secret: the recomputed signature does not match', async () => {
    const expected = credentials();
    const answer = await getUnknownPet(expected, { ...expected, secretAccessKey: credentials().secretAccessKey });
    expect(answer.status).toBe(503);
    expect(answer.signatures.verified).toBe(0);
    expect(answer.signatures.refused.map((r) => r.type)).toContain('InvalidSignatureException');
  });

  it('without the session token: refused', async () => {
    const expected = credentials();
    const answer = await getUnknownPet(expected, { ...expected, sessionToken: '' });
    expect(answer.status).toBe(503);
    expect(answer.signatures.verified).toBe(0);
    expect(answer.signatures.refused.map((r) => r.type)).toContain('UnrecognizedClientException');
  });

  it('an unsigned request: refused', async () => {
    running.gate = await startIamGate({
      upstream: store.endpoint,
      roleArn: 'arn:aws:iam::123456789012:role/any',
      sessionName: 'any',
      policies: [],
      tables,
      credentials: credentials(),
    });
    const gate = running.gate;
    const response = await fetch(gate.endpoint, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-amz-json-1.0', 'X-Amz-Target': 'DynamoDB_20120810.ListTables' },
      body: '{}',
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { __type: string }).__type).toMatch(/MissingAuthenticationTokenException$/);
    expect(gate.signatures).toMatchObject({ verified: 0, refused: [{ type: 'MissingAuthenticationTokenException' }] });
  });
});
