/**
 * The endpoints lib/store/endpoint.ts answers without the SDK's rules: for every input it takes, the
 * answer the installed SDK's own resolver gives, over every region the SDK knows and every
 * combination of the rules' other inputs; everything else is the SDK's. And the clients use it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  DynamoDBClient,
  GetItemCommand,
  ListTablesCommand,
  PutItemCommand,
  QueryCommand,
  ScanCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../infra/bundling.ts';
import { createDynamoClient } from '../../../lib/store/dynamo.ts';
import { ENDPOINT_INPUTS, knownEndpoint, withKnownEndpoints, type EndpointResolver } from '../../../lib/store/endpoint.ts';
import { useEmbeddedStore } from '../../support/store.ts';

const endpoint = useEmbeddedStore();
const sdkFile = (...path: string[]) => readFileSync(join(PROJECT_ROOT, 'node_modules', '@aws-sdk', ...path), 'utf8');

/** The resolver a DynamoDB client has by default: the SDK's rules, as published. */
const sdkResolver: EndpointResolver = new DynamoDBClient({ region: 'us-east-1' }).config.endpointProvider;

/** Every region the SDK lists in any of its partitions (its partitions data, as published). */
const PARTITIONS = sdkFile('core', 'dist-es', 'submodules', 'client', 'util-endpoints', 'lib', 'aws', 'partitions.js');
const LISTED_REGIONS = [...PARTITIONS.matchAll(/"([a-z0-9-]+)": \{\s*"description"/g)].map((match) => match[1]!);

const ARN = 'arn:aws:dynamodb:us-east-1:123456789012:table/pets';
const DOMAIN = {
  Region: [
    ...LISTED_REGIONS,
    // Unlisted, and near misses of the commercial pattern.
    'eu-central-9', 'ap-southeast-42', 'us-gov-east-9', 'cn-west-9', 'eusc-de-east-9', 'us-iso-west-9', 'local',
    '', 'US-EAST-1', 'us-East-1', 'us_east-1', 'us-east-1 ', ' us-east-1', 'us-east-1.example.com', 'us-east-x', 'xx-east-1',
    'us-east1-1', 'us-east-1-1', 'us-east-01', undefined,
    // Other partitions' patterns with a commercial prefix: us-iso-1-1 is aws-iso's (c2s.ic.gov).
    'us-iso-1-1', 'us-isob-1-1', 'eu-isoe-1-1', 'us-isof-1-1', 'us-gov-1-1', 'cn-x-1', 'eusc-de-x-1',
  ],
  Endpoint: [
    undefined, 'http://127.0.0.1:4567', 'http://127.0.0.1:4567/', 'http://localhost:8000', 'https://localhost', 'http://[::1]:1',
    'http://127.0.0.1:4567/path', 'http://localhost.example.com', 'https://dynamodb.us-east-1.api.aws',
    // A loopback name as user info: the host is AWS's dual-stack one, which the rules refuse.
    'http://localhost@dynamodb.us-east-1.api.aws', 'http://127.0.0.1:1@dynamodb.us-east-1.api.aws',
  ],
  UseFIPS: [false, true],
  UseDualStack: [false, true],
  AccountId: [undefined, '123456789012', 'not a host label'],
  AccountIdEndpointMode: [undefined, 'preferred', 'disabled', 'required', 'other'],
  ResourceArn: [undefined, 'pets', ARN, 'arn:aws:dynamodb:eu-west-1:123456789012:table/pets'],
  ResourceArnList: [undefined, ['pets', 'control'], [ARN], ['pets', ARN], [undefined]],
  IsSearchOperation: [undefined, false, true],
} as const;

/** Every combination of the domain's values, as the SDK hands them to a resolver (an odometer over the keys). */
function* allInputs(): Generator<Parameters<EndpointResolver>[0]> {
  const keys = Object.keys(DOMAIN) as (keyof typeof DOMAIN)[];
  const digits = keys.map(() => 0);
  for (;;) {
    const inputs: Record<string, unknown> = {};
    keys.forEach((key, index) => (inputs[key] = DOMAIN[key][digits[index]!]));
    yield inputs as Parameters<EndpointResolver>[0];
    let index = keys.length - 1;
    while (index >= 0 && ++digits[index]! === DOMAIN[keys[index]!].length) digits[index--] = 0;
    if (index < 0) return;
  }
}

const asPlain = (answer: ReturnType<EndpointResolver>) => ({ ...answer, url: answer.url.href });

describe('the endpoints answered without the SDK rules', () => {
  it("reads exactly the inputs the SDK's DynamoDB rules have (an SDK update adding one fails here)", () => {
    const resolverSource = sdkFile('client-dynamodb', 'dist-es', 'endpoint', 'endpointResolver.js');
    const cached = /params: \[([^\]]*)\]/.exec(resolverSource)?.[1];
    expect(cached, 'the SDK resolver cache keys on its inputs').toBeDefined();
    const sdkInputs = [...cached!.matchAll(/"(\w+)"/g)].map((match) => match[1]);
    expect(sdkInputs.sort()).toEqual([...ENDPOINT_INPUTS].sort());
  });

  it("answers every input it takes with the SDK resolver's own answer, over every listed region and combination", () => {
    expect(LISTED_REGIONS.length).toBeGreaterThan(30);
    expect(LISTED_REGIONS).toEqual(expect.arrayContaining(['us-east-1', 'eu-west-1', 'us-gov-west-1', 'cn-north-1']));
    let combinations = 0;
    const taken = { aws: new Set<string>(), loopback: 0 };
    for (const inputs of allInputs()) {
      combinations++;
      const ours = knownEndpoint(inputs);
      if (!ours) continue;
      expect(asPlain(ours), JSON.stringify(inputs)).toEqual(asPlain(sdkResolver(inputs)));
      if (inputs.Endpoint === undefined) taken.aws.add(String(inputs.Region));
      else taken.loopback++;
    }
    expect(combinations).toBeGreaterThan(1_000_000);
    // What it takes: every commercial region the SDK lists, and loopback endpoints; nothing of the other partitions.
    const commercial = LISTED_REGIONS.filter((region) => sdkResolver({ Region: region, UseFIPS: false, UseDualStack: false }).url.hostname.endsWith('.amazonaws.com'));
    expect([...taken.aws].filter((region) => LISTED_REGIONS.includes(region)).sort()).toEqual(
      commercial.filter((region) => /^[a-z]{2}-[a-z]+-\d+$/.test(region)).sort(),
    );
    expect(taken.aws).toContain('us-east-1');
    expect(taken.aws).not.toContain('us-gov-west-1');
    expect(taken.aws).not.toContain('cn-north-1');
    expect(taken.loopback).toBeGreaterThan(0);
  });

  it('leaves to the SDK what it does not take, errors included', () => {
    const fips = { Region: 'us-east-1', UseFIPS: true, UseDualStack: false };
    const resolver = withKnownEndpoints(sdkResolver);
    expect(knownEndpoint(fips)).toBeUndefined();
    expect(resolver(fips).url.href).toBe('https://dynamodb-fips.us-east-1.amazonaws.com/');
    const refused = { Region: 'us-east-1', UseFIPS: false, UseDualStack: false, Endpoint: 'https://dynamodb.us-east-1.api.aws' };
    expect(knownEndpoint(refused)).toBeUndefined();
    expect(() => resolver(refused)).toThrow(/not supported for dual-stack endpoints/);
    const unknownInput = { Region: 'us-east-1', UseFIPS: false, UseDualStack: false, UseGlobalEndpoint: true };
    expect(knownEndpoint(unknownInput)).toBeUndefined();
  });
});

describe("the clients' endpoint resolver", () => {
  it("is the SDK's with these cases taken first, and the SDK reads it from the client's config at each call", async () => {
    const client = createDynamoClient({ region: 'us-east-1', endpoint: endpoint() });
    try {
      const resolver = client.config.endpointProvider;
      expect(resolver).not.toBe(sdkResolver);
      expect(resolver({ Region: 'cn-north-1', UseFIPS: false, UseDualStack: false }).url.href).toBe('https://dynamodb.cn-north-1.amazonaws.com.cn/');
      const asked: Parameters<EndpointResolver>[0][] = [];
      client.config.endpointProvider = (inputs, context) => (asked.push(inputs), resolver(inputs, context));
      expect((await client.send(new ListTablesCommand({}))).TableNames).toBeInstanceOf(Array);
      expect(asked).toHaveLength(1);
      expect(knownEndpoint(asked[0]!)?.url.href).toBe(new URL(endpoint()).href);
    } finally {
      client.destroy();
    }
  });

  it("takes the inputs a client on AWS hands it for each kind of call the service makes (AWS's own endpoint, the SDK's default settings)", async () => {
    const client = createDynamoClient({ region: 'eu-west-1' });
    client.config.credentials = async () => ({ accessKeyId: 'AKIDENDPOINTTEST', secretAccessKey: 'endpoint-test' });
    const asked: Parameters<EndpointResolver>[0][] = [];
    // Stop each call at its endpoint: nothing leaves this machine.
    client.config.endpointProvider = (inputs) => {
      asked.push(inputs);
      throw new Error('stopped at the endpoint');
    };
    try {
      const calls = [
        new GetItemCommand({ TableName: 'pets', Key: { id: { N: '1' } } }),
        new QueryCommand({ TableName: 'pets', IndexName: 'status-index', KeyConditionExpression: '#s = :s' }),
        new ScanCommand({ TableName: 'pets' }),
        new PutItemCommand({ TableName: 'pets', Item: { id: { N: '1' } } }),
        new UpdateItemCommand({ TableName: 'control', Key: { id: { S: 'x' } } }),
      ];
      for (const call of calls) await expect(client.send(call as never)).rejects.toThrow('stopped at the endpoint');
      expect(asked).toHaveLength(calls.length);
      for (const inputs of asked) expect(knownEndpoint(inputs)?.url.href, JSON.stringify(inputs)).toBe('https://dynamodb.eu-west-1.amazonaws.com/');
    } finally {
      client.destroy();
    }
  });
});
