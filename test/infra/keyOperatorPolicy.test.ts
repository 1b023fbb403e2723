/**
 * The key operator's policy (infra/policies/key-operator.json, one per stage once filled), evaluated with
 * IAM's own rules (@cloud-copilot/iam-simulate) against every call `npm run keys` makes (create, list,
 * rotate, revoke, recorded as they are sent: DynamoDB on dynalite, API Gateway's control plane on a
 * loopback stand-in that keeps each API key's tags) and the calls of `keys pets` (list and remove the pets
 * a key created). It must allow them on its stage, and refuse them on the other stage and on another
 * API's keys.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stackName, type Stage } from '../../infra/stages.ts';
import { createDocumentClient } from '../../lib/store/dynamo.ts';
import { ensureControlTable } from '../../local/embeddedStore.ts';
import { API_KEY_FORMAT, runKeys, type StackOutputsReader } from '../../tools/keys/keys.ts';
import { apiGatewayUsagePlanKeys } from '../../tools/keys/usagePlanKeys.ts';
import { keyIn } from '../support/keys.ts';
import { useEmbeddedStore } from '../support/store.ts';
import { ACCOUNT, REGION, USAGE_PLAN_ID, expectAll, policyFile, type Call, type Principal } from './iamSimulation.ts';

const STAGE: Stage = 'production';
const operator = (stage: Stage, usagePlanId = USAGE_PLAN_ID): Principal => ({
  identity: [policyFile('key-operator.json', { stage, 'usage-plan-id': usagePlanId })],
});
const table = (stage: Stage, logicalId: string) =>
  `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${stackName(stage)}-${logicalId}-AB12CD34EF56`;
const stackId = (stage: Stage) =>
  `arn:aws:cloudformation:${REGION}:${ACCOUNT}:stack/${stackName(stage)}/0f5a8e10-cd6b-11ee-8a32-0a1b2c3d4e5f`;
const gateway = (path: string) => `arn:aws:apigateway:${REGION}::${path}`;

/** The calls of `npm run keys -- pets <keyId> --stage <stage> [--remove]`: a filtered Scan, a conditional DeleteItem. */
const petsCommandCalls = (stage: Stage): Call[] => [
  { action: 'dynamodb:Scan', resource: table(stage, 'PetsTable56B0D675') },
  { action: 'dynamodb:DeleteItem', resource: table(stage, 'PetsTable56B0D675') },
];

describe('infra/policies/key-operator.json and the calls npm run keys makes, recorded as it sends them', () => {
  const endpoint = useEmbeddedStore();
  let documents: DynamoDBDocumentClient;
  let server: Server;
  const calls: Call[] = [];
  const controlTable = `${stackName(STAGE)}-ControlTableF3E1E223-AB12CD34EF56`;
  const saved = { key: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };

  beforeAll(async () => {
    await ensureControlTable(endpoint(), controlTable);
    documents = createDocumentClient({ endpoint: endpoint() });
    // API Gateway's control plane as the CLI calls it: every call recorded as its IAM action on its
    // path, with the tags a create sends (aws:RequestTag) and those of the key a delete names (aws:ResourceTag).
    const keys = new Map<string, { name: string; tags: Record<string, string> }>();
    server = createServer((request, response) => {
      const url = new URL(request.url ?? '/', 'http://x');
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        const call: Call = { action: `apigateway:${request.method}`, resource: gateway(url.pathname) };
        calls.push(call);
        response.setHeader('Content-Type', 'application/json');
        if (request.method === 'POST' && url.pathname === '/apikeys') {
          const { name, tags = {} } = JSON.parse(body) as { name: string; tags?: Record<string, string> };
          call.context = {
            ...Object.fromEntries(Object.entries(tags).map(([key, value]) => [`aws:RequestTag/${key}`, value])),
            'aws:TagKeys': Object.keys(tags),
          };
          const id = `key${keys.size + 1}`;
          keys.set(id, { name, tags });
          response.statusCode = 201;
          return response.end(JSON.stringify({ id }));
        }
        if (request.method === 'GET') {
          const prefix = url.searchParams.get('nameQuery') ?? '';
          const item = [...keys]
            .filter(([, key]) => key.name.startsWith(prefix))
            .map(([id, { name }]) => ({ id, name }));
          return response.end(JSON.stringify({ item }));
        }
        if (request.method === 'DELETE') {
          const tags = keys.get(url.pathname.split('/').at(-1)!)?.tags ?? {};
          call.context = Object.fromEntries(
            Object.entries(tags).map(([key, value]) => [`aws:ResourceTag/${key}`, value]),
          );
          response.statusCode = 202;
          return response.end('');
        }
        response.statusCode = 201;
        response.end('{}');
      });
    });
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    process.env.AWS_ACCESS_KEY_ID = 'AKIDEXAMPLE';
    process.env.AWS_SECRET_ACCESS_KEY = 'operator';
  });
  afterAll(async () => {
    documents.destroy();
    await new Promise((closed) => server.close(closed));
    for (const [name, value] of [
      ['AWS_ACCESS_KEY_ID', saved.key],
      ['AWS_SECRET_ACCESS_KEY', saved.secret],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  async function keys(...argv: string[]): Promise<string> {
    const client = {
      send: (command: {
        constructor: { name: string };
        input: {
          TableName: string;
          Key?: { pk: string };
          Item?: { pk: string };
          ExpressionAttributeValues?: Record<string, string>;
        };
      }) => {
        const { input } = command;
        const partition = input.Key?.pk ?? input.Item?.pk ?? input.ExpressionAttributeValues?.[':pk'];
        const action = command.constructor.name.replace(/Command$/, '');
        calls.push({
          action: `dynamodb:${{ Delete: 'DeleteItem', Get: 'GetItem', Put: 'PutItem', Update: 'UpdateItem' }[action] ?? action}`,
          resource: `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${input.TableName}`,
          context: { 'dynamodb:LeadingKeys': [String(partition)] },
        });
        return documents.send(command as never);
      },
    } as unknown as DynamoDBDocumentClient;
    const stacks: StackOutputsReader = {
      send: async (command) => {
        calls.push({ action: 'cloudformation:DescribeStacks', resource: stackId(STAGE) });
        return {
          $metadata: {},
          Stacks: [
            {
              StackName: command.input.StackName,
              StackStatus: 'UPDATE_COMPLETE',
              CreationTime: new Date(),
              Outputs: [
                { OutputKey: 'ControlTableName', OutputValue: controlTable },
                { OutputKey: 'UsagePlanId', OutputValue: USAGE_PLAN_ID },
              ],
            },
          ],
        };
      },
    };
    const out: string[] = [];
    const code = await runKeys(argv, {
      client,
      stacks,
      usagePlanKeys: apiGatewayUsagePlanKeys({
        region: REGION,
        endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      }),
      out: (line) => out.push(line),
      err: (line) => out.push(line),
      stdoutIsTerminal: true,
      env: {},
    });
    expect(code, out.join('\n')).toBe(0);
    return out.join('\n');
  }

  it("allows every one of them on its stage: the apikeys items, the stage's usage plan, API keys tagged with the stage", async () => {
    const created = await keys('create', '--stage', STAGE);
    const keyId = API_KEY_FORMAT.exec(keyIn(created)!)![1]!;
    await keys('list', '--stage', STAGE);
    const rotated = await keys('rotate', keyId, '--stage', STAGE);
    const successor = API_KEY_FORMAT.exec(keyIn(rotated)!)![1]!;
    await keys('revoke', keyId, '--stage', STAGE);
    await keys('revoke', successor, '--stage', STAGE);
    expect([...new Set(calls.map((call) => call.action))].sort()).toEqual(
      [
        'apigateway:DELETE',
        'apigateway:GET',
        'apigateway:POST',
        'cloudformation:DescribeStacks',
        'dynamodb:DeleteItem',
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:Query',
        'dynamodb:UpdateItem',
      ].sort(),
    );
    expect(calls.filter((call) => call.action === 'apigateway:DELETE').map((call) => call.context)).toEqual([
      { 'aws:ResourceTag/service': 'petstore', 'aws:ResourceTag/stage': STAGE },
      { 'aws:ResourceTag/service': 'petstore', 'aws:ResourceTag/stage': STAGE },
    ]);
    await expectAll(operator(STAGE), [...calls, ...petsCommandCalls(STAGE)], 'Allowed');
  });

  it('refuses the same calls on the other stage: its stack, tables, usage plan and keys', async () => {
    const otherStage: Stage = 'staging';
    await expectAll(operator(otherStage, 'otherplan'), [...calls, ...petsCommandCalls(STAGE)], 'Denied');
  });

  it("refuses another API's keys and plans, the Region's key list, and anything but the apikeys partition", async () => {
    const controlTableArn = `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${controlTable}`;
    await expectAll(
      operator(STAGE),
      [
        { action: 'apigateway:GET', resource: gateway('/apikeys') },
        {
          action: 'apigateway:DELETE',
          resource: gateway('/apikeys/otherkey'),
          context: { 'aws:ResourceTag/service': 'billing', 'aws:ResourceTag/stage': STAGE },
        },
        { action: 'apigateway:DELETE', resource: gateway('/apikeys/untagged') },
        { action: 'apigateway:POST', resource: gateway('/apikeys'), context: { 'aws:TagKeys': [] } },
        {
          action: 'apigateway:POST',
          resource: gateway('/apikeys'),
          context: {
            'aws:RequestTag/service': 'petstore',
            'aws:RequestTag/stage': STAGE,
            'aws:RequestTag/owner': 'x',
            'aws:TagKeys': ['service', 'stage', 'owner'],
          },
        },
        { action: 'apigateway:POST', resource: gateway('/usageplans/otherplan/keys') },
        { action: 'apigateway:PATCH', resource: gateway(`/usageplans/${USAGE_PLAN_ID}`) },
        {
          action: 'apigateway:PUT',
          resource: gateway('/tags/arn%3Aaws%3Aapigateway%3Aus-east-1%3A%3A%2Fapikeys%2Fotherkey'),
        },
        {
          action: 'dynamodb:GetItem',
          resource: controlTableArn,
          context: { 'dynamodb:LeadingKeys': ['cursor-secret'] },
        },
        {
          action: 'dynamodb:PutItem',
          resource: controlTableArn,
          context: { 'dynamodb:LeadingKeys': ['idempotency#x'] },
        },
        { action: 'dynamodb:Scan', resource: controlTableArn },
        { action: 'dynamodb:PutItem', resource: table(STAGE, 'PetsTable56B0D675') },
        { action: 'dynamodb:DeleteTable', resource: table(STAGE, 'PetsTable56B0D675') },
        { action: 'iam:CreateUser', resource: `arn:aws:iam::${ACCOUNT}:user/intruder` },
      ],
      'Denied',
    );
  });
});
