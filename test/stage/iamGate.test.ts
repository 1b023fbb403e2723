import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CfnTemplate } from '../../tools/stage-emulator/src/cloudAssembly.ts';
import {
  rolePolicies,
  startIamGate,
  type GateCredentials,
  type IamGate,
} from '../../tools/stage-emulator/src/iamGate.ts';
import { TemplateResolver } from '../../tools/stage-emulator/src/intrinsics.ts';
import { createTablesFromTemplate, type TableKeys } from '../../tools/stage-emulator/src/tables.ts';
import { startEmbeddedStore, type EmbeddedStore } from '../../local/embeddedStore.ts';
import { createDocumentClient } from '../../lib/store/dynamo.ts';
import { synthesize, testApp } from '../infra/synth.ts';

const STACK = 'PetStore-staging';
/** The control table's physical name: CloudFormation names it (here, as the resolver does). */
let CONTROL: string;
const OPERATIONS = ['listPets', 'createPet', 'getPet'] as const;
type Operation = (typeof OPERATIONS)[number];

interface FunctionUnderTest {
  functionName: string;
  roleArn: string;
  gate: IamGate;
  /** A real DocumentClient signing with the credentials the gate was given. */
  client: DynamoDBDocumentClient;
}

const credentials: GateCredentials = {
  accessKeyId: 'ASIAOFFLINE0EXAMPLE1',
  secretAccessKey: 'offline/secret/key/0123456789abcdefghijklm',
  sessionToken: 'offline-session-token-for-the-gate-test',
};

let template: CfnTemplate;
let resolver: TemplateResolver;
let store: EmbeddedStore;
let tables: TableKeys[];
let petsTable: string;
let direct: DynamoDBDocumentClient;
const functions = new Map<Operation, FunctionUnderTest>();

const clientFor = (endpoint: string, signing: Partial<GateCredentials> = credentials) =>
  DynamoDBDocumentClient.from(
    new DynamoDBClient({ endpoint, region: 'us-east-1', maxAttempts: 1, credentials: signing as GateCredentials }),
  );

/** operation name -> function logical id, through the API method's integration and the live alias, as API Gateway goes. */
function functionOf(operation: Operation): string {
  const [, method] = Object.entries(template.Resources).find(
    ([, resource]) => resource.Type === 'AWS::ApiGateway::Method' && resource.Properties?.OperationName === operation,
  )!;
  const uri = resolver.resolveString((method.Properties!.Integration as { Uri: unknown }).Uri);
  const [, alias] = Object.entries(template.Resources).find(
    ([id, resource]) => resource.Type === 'AWS::Lambda::Alias' && uri.includes(`/${resolver.ref(id)}/`),
  )!;
  return (alias.Properties!.FunctionName as { Ref: string }).Ref;
}

beforeAll(async () => {
  const { stacks } = testApp({ stages: ['staging'] });
  template = synthesize(stacks.get('staging')!).json as unknown as CfnTemplate;
  resolver = new TemplateResolver({ stackName: STACK, template });
  store = await startEmbeddedStore();
  tables = await createTablesFromTemplate(store.endpoint, template, resolver);
  petsTable = tables.find((table) => table.partitionKey === 'id')!.tableName;
  CONTROL = tables.find((table) => table.partitionKey === 'pk')!.tableName;
  direct = createDocumentClient({ endpoint: store.endpoint });
  for (const operation of OPERATIONS) {
    const functionId = functionOf(operation);
    const roleId = (template.Resources[functionId]!.Properties!.Role as { 'Fn::GetAtt': [string, string] })[
      'Fn::GetAtt'
    ][0];
    const functionName = resolver.ref(functionId);
    const roleArn = resolver.getAtt(roleId, 'Arn');
    const gate = await startIamGate({
      upstream: store.endpoint,
      roleArn,
      sessionName: functionName,
      policies: rolePolicies(template, resolver, roleId),
      tables,
      credentials,
    });
    functions.set(operation, { functionName, roleArn, gate, client: clientFor(gate.endpoint) });
  }
});

afterAll(async () => {
  for (const { gate, client } of functions.values()) {
    client.destroy();
    await gate.close();
  }
  direct?.destroy();
  await store?.close();
});

const fn = (operation: Operation) => functions.get(operation)!;
const tableArn = (name: string) => `arn:aws:dynamodb:us-east-1:123456789012:table/${name}`;
const queryApiKeys = () => ({
  TableName: CONTROL,
  KeyConditionExpression: '#pk = :pk',
  ExpressionAttributeNames: { '#pk': 'pk' },
  ExpressionAttributeValues: { ':pk': 'apikeys' },
});
const queryPartition = (pk: string) => ({ ...queryApiKeys(), ExpressionAttributeValues: { ':pk': pk } });

/** The AccessDeniedException the SDK raises, and its message; fails when the call goes through. */
async function denied(call: Promise<unknown>): Promise<string> {
  const error = await call.then(
    () => undefined,
    (failure: unknown) => failure as Error & { $metadata?: { httpStatusCode?: number } },
  );
  expect(error, 'the call went through').toBeDefined();
  expect(error!.name).toBe('AccessDeniedException');
  expect(error!.$metadata?.httpStatusCode).toBe(400);
  return error!.message;
}

describe('IAM gate, driven by a real DynamoDB client, per function role of the staging template', () => {
  it('listPets: Query on the status index, Scan, the API keys and the cursor secret reach the store', async () => {
    const { client, gate } = fn('listPets');
    const rex = { id: 7, name: 'Rex', status: 'available', statusShard: 'available#1' };
    await direct.send(new PutCommand({ TableName: petsTable, Item: rex }));
    const page = await client.send(
      new QueryCommand({
        TableName: petsTable,
        IndexName: 'status-index',
        KeyConditionExpression: '#s = :s',
        ExpressionAttributeNames: { '#s': 'statusShard' },
        ExpressionAttributeValues: { ':s': 'available#1' },
      }),
    );
    expect(page.Items).toEqual([rex]);
    expect((await client.send(new ScanCommand({ TableName: petsTable }))).Items).toContainEqual(rex);
    await client.send(new QueryCommand(queryApiKeys()));
    await client.send(
      new PutCommand({ TableName: CONTROL, Item: { pk: 'cursor-secret', sk: 'current', secret: 's3cret' } }),
    );
    expect(
      (await client.send(new GetCommand({ TableName: CONTROL, Key: { pk: 'cursor-secret', sk: 'current' } }))).Item
        ?.secret,
    ).toBe('s3cret');
    expect(gate.decisions.slice(-5)).toEqual([
      { action: 'dynamodb:Query', resource: `${tableArn(petsTable)}/index/status-index`, allowed: true },
      { action: 'dynamodb:Scan', resource: tableArn(petsTable), allowed: true },
      { action: 'dynamodb:Query', resource: tableArn(CONTROL), leadingKeys: ['apikeys'], allowed: true },
      { action: 'dynamodb:PutItem', resource: tableArn(CONTROL), leadingKeys: ['cursor-secret'], allowed: true },
      { action: 'dynamodb:GetItem', resource: tableArn(CONTROL), leadingKeys: ['cursor-secret'], allowed: true },
    ]);
  });

  it('listPets: idempotency records, other control partitions, pet writes are denied', async () => {
    const { client, gate, functionName } = fn('listPets');
    const message = await denied(
      client.send(new GetCommand({ TableName: CONTROL, Key: { pk: 'idempotency#x', sk: 'record' } })),
    );
    expect(message).toMatch(
      new RegExp(
        `^User: arn:aws:sts::123456789012:assumed-role/${STACK}-ListPetsRole\\w+/${functionName} is not authorized to perform: dynamodb:GetItem on resource: ${tableArn(CONTROL)} because`,
      ),
    );
    await denied(client.send(new QueryCommand(queryPartition('cursor-secret'))));
    await denied(client.send(new PutCommand({ TableName: petsTable, Item: { id: 1, name: 'x' } })));
    await denied(client.send(new DeleteCommand({ TableName: CONTROL, Key: { pk: 'cursor-secret', sk: 'current' } })));
    expect(
      gate.decisions.slice(-4).map(({ action, allowed, leadingKeys }) => ({ action, allowed, leadingKeys })),
    ).toEqual([
      { action: 'dynamodb:GetItem', allowed: false, leadingKeys: ['idempotency#x'] },
      { action: 'dynamodb:Query', allowed: false, leadingKeys: ['cursor-secret'] },
      { action: 'dynamodb:PutItem', allowed: false, leadingKeys: ['1'] },
      { action: 'dynamodb:DeleteItem', allowed: false, leadingKeys: ['cursor-secret'] },
    ]);
  });

  it('createPet: pets PutItem/GetItem, its idempotency records and the API keys reach the store', async () => {
    const { client } = fn('createPet');
    await client.send(
      new PutCommand({
        TableName: petsTable,
        Item: { id: 42, name: 'Tom' },
        ConditionExpression: 'attribute_not_exists(id)',
      }),
    );
    expect((await client.send(new GetCommand({ TableName: petsTable, Key: { id: 42 } }))).Item).toEqual({
      id: 42,
      name: 'Tom',
    });
    const key = { pk: 'idempotency#x', sk: 'record' };
    await client.send(new PutCommand({ TableName: CONTROL, Item: { ...key, state: 'in-progress' } }));
    await client.send(
      new UpdateCommand({
        TableName: CONTROL,
        Key: key,
        UpdateExpression: 'SET #s = :s',
        ExpressionAttributeNames: { '#s': 'state' },
        ExpressionAttributeValues: { ':s': 'done' },
      }),
    );
    expect((await client.send(new GetCommand({ TableName: CONTROL, Key: key }))).Item?.state).toBe('done');
    await client.send(new QueryCommand(queryApiKeys()));
    // The writes reached the store itself.
    expect((await direct.send(new GetCommand({ TableName: petsTable, Key: { id: 42 } }))).Item).toEqual({
      id: 42,
      name: 'Tom',
    });
  });

  it('createPet: the status index, the cursor secret, deletes and batch reads are denied', async () => {
    const { client, gate } = fn('createPet');
    await direct.send(new PutCommand({ TableName: CONTROL, Item: { pk: 'idempotency#y', sk: 'record' } }));
    const message = await denied(
      client.send(
        new QueryCommand({
          TableName: petsTable,
          IndexName: 'status-index',
          KeyConditionExpression: '#s = :s',
          ExpressionAttributeNames: { '#s': 'statusShard' },
          ExpressionAttributeValues: { ':s': 'sold#0' },
        }),
      ),
    );
    expect(message).toContain(`dynamodb:Query on resource: ${tableArn(petsTable)}/index/status-index because`);
    await denied(client.send(new GetCommand({ TableName: CONTROL, Key: { pk: 'cursor-secret', sk: 'current' } })));
    await denied(client.send(new DeleteCommand({ TableName: CONTROL, Key: { pk: 'idempotency#y', sk: 'record' } })));
    await denied(client.send(new QueryCommand(queryPartition('idempotency#y'))));
    await denied(client.send(new BatchGetCommand({ RequestItems: { [petsTable]: { Keys: [{ id: 42 }] } } })));
    expect(gate.decisions.at(-1)).toEqual({
      action: 'dynamodb:BatchGetItem',
      resource: tableArn(petsTable),
      leadingKeys: ['42'],
      allowed: false,
      reason: 'ImplicitlyDenied',
    });
    // Nothing denied reached the store.
    expect(
      (await direct.send(new GetCommand({ TableName: CONTROL, Key: { pk: 'idempotency#y', sk: 'record' } }))).Item,
    ).toBeDefined();
  });

  it("getPet: GetItem and the API keys only; its PutItem is refused with DynamoDB's exact message", async () => {
    const { client, functionName, roleArn } = fn('getPet');
    await direct.send(new PutCommand({ TableName: petsTable, Item: { id: 420, name: 'Tom' } }));
    expect((await client.send(new GetCommand({ TableName: petsTable, Key: { id: 420 } }))).Item?.name).toBe('Tom');
    await client.send(new QueryCommand(queryApiKeys()));
    const roleName = roleArn.split('/').pop();
    expect(await denied(client.send(new PutCommand({ TableName: petsTable, Item: { id: 43, name: 'Jerry' } })))).toBe(
      `User: arn:aws:sts::123456789012:assumed-role/${roleName}/${functionName} is not authorized to perform: dynamodb:PutItem on resource: ${tableArn(petsTable)} because no identity-based policy allows the dynamodb:PutItem action`,
    );
    await denied(client.send(new ScanCommand({ TableName: petsTable })));
    await denied(client.send(new DeleteCommand({ TableName: petsTable, Key: { id: 420 } })));
    expect((await direct.send(new GetCommand({ TableName: petsTable, Key: { id: 43 } }))).Item).toBeUndefined();
    expect((await direct.send(new GetCommand({ TableName: petsTable, Key: { id: 420 } }))).Item).toBeDefined();
  });

  it.each(OPERATIONS)(
    '%s: every function may Query the API keys, no other control partition, and delete nothing',
    async (operation) => {
      const { client } = fn(operation);
      await client.send(new QueryCommand(queryApiKeys()));
      await denied(client.send(new QueryCommand(queryPartition('apikeys-but-not-quite'))));
      await denied(client.send(new DeleteCommand({ TableName: CONTROL, Key: { pk: 'apikeys', sk: 'k1' } })));
    },
  );

  it('evaluates a role with a grant removed from a copy of the template', async () => {
    const copy = structuredClone(template);
    const roleId = Object.keys(copy.Resources).find((id) => id.startsWith('GetPetRole'))!;
    const policy = (
      copy.Resources[roleId]!.Properties!.Policies as { PolicyDocument: { Statement: { Sid?: string }[] } }[]
    )[0]!;
    policy.PolicyDocument.Statement = policy.PolicyDocument.Statement.filter((statement) => statement.Sid !== 'Table');
    const gate = await startIamGate({
      upstream: store.endpoint,
      roleArn: resolver.getAtt(roleId, 'Arn'),
      sessionName: 'getPet',
      policies: rolePolicies(copy, resolver, roleId),
      tables,
    });
    const client = clientFor(gate.endpoint);
    try {
      await denied(client.send(new GetCommand({ TableName: petsTable, Key: { id: 420 } })));
      await client.send(new QueryCommand(queryApiKeys()));
    } finally {
      client.destroy();
      await gate.close();
    }
  });
});

describe('IAM gate on the wire', () => {
  /** A raw DynamoDB JSON request, unsigned, as a client without credentials would send it. */
  const raw = (endpoint: string, operation: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(endpoint, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-amz-json-1.0',
        'X-Amz-Target': `DynamoDB_20120810.${operation}`,
        ...headers,
      },
      body: JSON.stringify(body),
    });

  it('answers a denial exactly as DynamoDB does: 400, JSON 1.0, a request id, the coral type', async () => {
    const roleId = Object.keys(template.Resources).find((id) => id.startsWith('GetPetRole'))!;
    const gate = await startIamGate({
      upstream: store.endpoint,
      roleArn: resolver.getAtt(roleId, 'Arn'),
      sessionName: 'session-1',
      policies: rolePolicies(template, resolver, roleId),
      tables,
    });
    try {
      const response = await raw(gate.endpoint, 'DeleteItem', { TableName: petsTable, Key: { id: { N: '42' } } });
      expect(response.status).toBe(400);
      expect(response.headers.get('content-type')).toBe('application/x-amz-json-1.0');
      expect(response.headers.get('x-amzn-requestid')).toMatch(/^[A-Z0-9]{52}$/);
      expect(await response.json()).toEqual({
        __type: 'com.amazon.coral.service#AccessDeniedException',
        Message: `User: arn:aws:sts::123456789012:assumed-role/${resolver.ref(roleId)}/session-1 is not authorized to perform: dynamodb:DeleteItem on resource: ${tableArn(petsTable)} because no identity-based policy allows the dynamodb:DeleteItem action`,
      });
      // An operation no policy names (nor IAM knows) is evaluated like any other, and denied.
      const unknown = await raw(gate.endpoint, 'FrobnicateItem', { TableName: petsTable });
      expect(unknown.status).toBe(400);
      expect(((await unknown.json()) as { __type: string }).__type).toBe(
        'com.amazon.coral.service#AccessDeniedException',
      );
      expect(gate.decisions.at(-1)).toMatchObject({
        action: 'dynamodb:FrobnicateItem',
        resource: tableArn(petsTable),
        allowed: false,
      });
      // Allowed: the store's own answer, passed through (here dynalite's).
      // (This gate verifies no signature; dynalite only wants the signature's headers to be there.)
      await direct.send(new PutCommand({ TableName: petsTable, Item: { id: 4242, name: 'Tom' } }));
      const signature = {
        Authorization: `AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date, Signature=${'0'.repeat(64)}`,
        'X-Amz-Date': '20260101T000000Z',
      };
      const allowed = await raw(
        gate.endpoint,
        'GetItem',
        { TableName: petsTable, Key: { id: { N: '4242' } } },
        signature,
      );
      expect(allowed.status).toBe(200);
      expect(await allowed.json()).toEqual({ Item: { id: { N: '4242' }, name: { S: 'Tom' } } });
    } finally {
      await gate.close();
    }
  });

  it('refuses requests without a signature, with an unknown key, without or with a wrong session token, or wrongly signed', async () => {
    const { gate } = fn('getPet');
    const before = gate.decisions.length;
    const unsigned = await raw(gate.endpoint, 'GetItem', { TableName: petsTable, Key: { id: { N: '42' } } });
    expect(unsigned.status).toBe(400);
    expect(await unsigned.json()).toEqual({
      __type: 'com.amazon.coral.service#MissingAuthenticationTokenException',
      Message: 'Request is missing Authentication Token',
    });

    const get = new GetCommand({ TableName: petsTable, Key: { id: 42 } });
    const refusal = async (client: DynamoDBDocumentClient) => {
      try {
        await client.send(get);
        return 'went through';
      } catch (error) {
        return (error as Error).name;
      } finally {
        client.destroy();
      }
    };
    expect(await refusal(clientFor(gate.endpoint, { ...credentials, accessKeyId: 'ASIAUNKNOWN000000000' }))).toBe(
      'UnrecognizedClientException',
    );
    expect(
      await refusal(
        clientFor(gate.endpoint, {
          accessKeyId: credentials.accessKeyId,
          secretAccessKey: credentials.secretAccessKey,
        }),
      ),
    ).toBe('UnrecognizedClientException');
    expect(await refusal(clientFor(gate.endpoint, { ...credentials, sessionToken: 'another-token' }))).toBe(
      'UnrecognizedClientException',
    );
    expect(await refusal(clientFor(gate.endpoint, { ...credentials, secretAccessKey: 'wrong-secret' }))).toBe(
      'InvalidSignatureException',
    );

    // A signed request whose body is changed after signing.
    const tampered = clientFor(gate.endpoint);
    tampered.middlewareStack.add(
      (next) => (args) => {
        const request = args.request as { body: string };
        request.body = request.body.replace('"42"', '"43"');
        return next(args);
      },
      { step: 'deserialize', name: 'tamperAfterSigning' },
    );
    expect(await refusal(tampered)).toBe('InvalidSignatureException');

    // The same credentials, correctly signed, go through; no refused request was evaluated or forwarded.
    expect(await refusal(clientFor(gate.endpoint))).toBe('went through');
    expect(gate.decisions.length).toBe(before + 1);
  });
});

describe('rolePolicies', () => {
  it("collects a role's inline policies and the AWS::IAM::Policy resources attached to it, resolved; not AWS managed policies", () => {
    const small: CfnTemplate = {
      Resources: {
        Table: { Type: 'AWS::DynamoDB::Table', Properties: {} },
        Role: {
          Type: 'AWS::IAM::Role',
          Properties: {
            ManagedPolicyArns: ['arn:aws:iam::aws:policy/AWSXRayDaemonWriteAccess', { Ref: 'Managed' }],
            Policies: [
              {
                PolicyName: 'inline',
                PolicyDocument: {
                  Statement: [
                    { Effect: 'Allow', Action: 'dynamodb:GetItem', Resource: { 'Fn::GetAtt': ['Table', 'Arn'] } },
                  ],
                },
              },
            ],
          },
        },
        OtherRole: { Type: 'AWS::IAM::Role', Properties: {} },
        Attached: {
          Type: 'AWS::IAM::Policy',
          Properties: {
            PolicyName: 'attached',
            Roles: [{ Ref: 'Role' }],
            PolicyDocument: { Statement: [{ Effect: 'Allow', Action: 'dynamodb:Query', Resource: '*' }] },
          },
        },
        ForOther: {
          Type: 'AWS::IAM::Policy',
          Properties: {
            PolicyName: 'other',
            Roles: [{ Ref: 'OtherRole' }],
            PolicyDocument: { Statement: [{ Effect: 'Allow', Action: '*', Resource: '*' }] },
          },
        },
        Managed: {
          Type: 'AWS::IAM::ManagedPolicy',
          Properties: { PolicyDocument: { Statement: [{ Effect: 'Allow', Action: 'dynamodb:Scan', Resource: '*' }] } },
        },
      },
    };
    const smallResolver = new TemplateResolver({ stackName: 'S', template: small });
    expect(rolePolicies(small, smallResolver, 'Role')).toEqual([
      {
        Statement: [
          {
            Effect: 'Allow',
            Action: 'dynamodb:GetItem',
            Resource: 'arn:aws:dynamodb:us-east-1:123456789012:table/S-Table',
          },
        ],
      },
      { Statement: [{ Effect: 'Allow', Action: 'dynamodb:Query', Resource: '*' }] },
      { Statement: [{ Effect: 'Allow', Action: 'dynamodb:Scan', Resource: '*' }] },
    ]);
    expect(() => rolePolicies(small, smallResolver, 'Table')).toThrow(/Table is not an AWS::IAM::Role/);
  });
});
