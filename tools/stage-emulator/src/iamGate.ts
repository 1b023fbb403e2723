import { randomBytes } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { crc32 } from 'node:zlib';
import { CloudAssemblyError, type CfnTemplate } from './cloudAssembly.ts';
import { evaluateCheck, grantsOf, markUsed, wouldAllow, type Check, type GrantUsage } from './grantUsage.ts';
import type { PolicyDocument, PolicyStatement } from './iamPolicy.ts';
import { OFFLINE_ENVIRONMENT, type DeployedEnvironment, type TemplateResolver } from './intrinsics.ts';
import type { TableKeys } from './tables.ts';
import { header, verifySignature, type GateCredentials } from './signature.ts';

export type { GateCredentials };

interface GateDecision {
  action: string;
  resource: string;
  leadingKeys?: string[];
  allowed: boolean;
  reason?: string;
}

export interface IamGate {
  endpoint: string;
  decisions: GateDecision[];
  /** Calls allowed and denied, and the role's DynamoDB grants with whether a call used each; never grows with traffic. */
  usage: GrantUsage;
  /** With `credentials`: how many requests carried a valid signature, and the ones refused (never forwarded). */
  signatures: { verified: number; refused: { type: string; message: string }[] };
  close(): Promise<void>;
}

export interface IamGateOptions {
  /** The DynamoDB-compatible endpoint allowed calls go to (dynalite). */
  upstream: string;
  /** For the AccessDenied message: arn:aws:sts::ACCOUNT:assumed-role/ROLE/SESSION. */
  roleArn: string;
  sessionName: string;
  /** The role's identity policies, resolved. */
  policies: PolicyDocument[];
  /** Physical table names with their key schemas (for dynamodb:LeadingKeys). */
  tables: TableKeys[];
  /** When given, every request's SigV4 signature is verified against them. */
  credentials?: GateCredentials;
  env?: DeployedEnvironment;
  /** Keep `decisions` and `signatures` (default true; the CLI turns it off so nothing grows with traffic). */
  recordDecisions?: boolean;
  /** Told every denial, beside the AccessDeniedException the function gets. */
  onDenied?: (denial: Denial) => void;
}

export interface Denial {
  check: Check;
  /** The AccessDeniedException's message, as the function gets it. */
  message: string;
  /** The least statement that would have allowed the call. */
  wouldAllow: PolicyStatement;
}

type AttributeValue = { S?: string; N?: string; B?: string };
type Item = Record<string, AttributeValue>;

const TARGET_PREFIX = 'DynamoDB_20120810.';
const JSON_1_0 = 'application/x-amz-json-1.0';
const DECISION_CACHE_SIZE = 10_000;

export async function startIamGate(options: IamGateOptions): Promise<IamGate> {
  const env = options.env ?? OFFLINE_ENVIRONMENT;
  // Only tests read them: a long offline session under load keeps nothing per request.
  const record = options.recordDecisions ?? true;
  const decisions: GateDecision[] = [];
  const signatures: IamGate['signatures'] = { verified: 0, refused: [] };
  const sessionArn = assumedRoleSessionArn(options.roleArn, options.sessionName, env);
  const usage: GrantUsage = { allowed: 0, denied: 0, grants: grantsOf(options.policies, options.tables) };
  const upstream = new URL(options.upstream);
  const evaluate = decisionCache(options.policies, usage, sessionArn, env);

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const body = await readBody(req);
    if (options.credentials) {
      const refusal = await verifySignature(req, body, options.credentials, env);
      if (refusal) {
        if (record) signatures.refused.push(refusal);
        return answerError(res, refusal.type, refusal.message);
      }
      if (record) signatures.verified++;
    }
    const checks = checksFor(req, body, options.tables, env);
    for (const check of checks) {
      const decision = await evaluate(check);
      if (record) decisions.push(decision);
      if (!decision.allowed) {
        const because =
          decision.reason === 'ExplicitlyDenied'
            ? 'with an explicit deny in an identity-based policy'
            : `because no identity-based policy allows the ${check.action} action`;
        const message = `User: ${sessionArn} is not authorized to perform: ${check.action} on resource: ${check.resource} ${because}`;
        usage.denied++;
        options.onDenied?.({ check, message, wouldAllow: wouldAllow(check) });
        return answerError(res, 'AccessDeniedException', message);
      }
    }
    usage.allowed++;
    forward(req, body, upstream, res);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent)
        answerError(res, 'InternalServerError', `IAM gate failure: ${(error as Error).message}`, 500);
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    decisions,
    usage,
    signatures,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * IAM's decision on a check, evaluated once per request shape: the policies never change while the
 * gate runs, so a decision holds for the same action, resource and leading keys.
 */
function decisionCache(
  policies: PolicyDocument[],
  usage: GrantUsage,
  sessionArn: string,
  env: DeployedEnvironment,
): (check: Check) => Promise<GateDecision> {
  const verdicts = new Map<string, Promise<GateDecision>>();
  const evaluate = (check: Check): Promise<GateDecision> => {
    const key = JSON.stringify([check.action, check.resource, check.leadingKeys]);
    let verdict = verdicts.get(key);
    if (!verdict) {
      if (verdicts.size >= DECISION_CACHE_SIZE) verdicts.clear();
      verdict = simulate(check);
      verdicts.set(key, verdict);
      // A simulation that failed is not a verdict: the next call of this shape tries again.
      verdict.catch(() => verdicts.delete(key));
    }
    return verdict.then((decision) => ({ ...decision }));
  };

  // Once per request shape (the verdict cache): which grants the shape uses never changes either.
  const simulate = async (check: Check): Promise<GateDecision> => {
    const verdict = await evaluateCheck(policies, check, sessionArn, env);
    if (verdict.allowed) await markUsed(usage.grants, check, sessionArn, env);
    return {
      action: check.action,
      resource: check.resource,
      ...(check.leadingKeys ? { leadingKeys: check.leadingKeys } : {}),
      ...verdict,
    };
  };
  return evaluate;
}

/**
 * A role's identity policies as the template gives them, resolved: its inline `Policies`, and every
 * `AWS::IAM::Policy` / `AWS::IAM::ManagedPolicy` of the template attached to it. AWS managed
 * policies (ARNs like arn:aws:iam::aws:policy/AWSXRayDaemonWriteAccess) are not evaluated: their
 * documents are not in the template, and the ones this stack attaches grant no dynamodb action.
 */
export function rolePolicies(
  template: CfnTemplate,
  resolver: TemplateResolver,
  roleLogicalId: string,
): PolicyDocument[] {
  const role = template.Resources[roleLogicalId];
  if (role?.Type !== 'AWS::IAM::Role')
    throw new CloudAssemblyError(`${roleLogicalId} is not an AWS::IAM::Role of the template.`);
  const roleName = resolver.ref(roleLogicalId);
  const inline = ((role.Properties?.Policies as { PolicyDocument: unknown }[] | undefined) ?? []).map(
    (policy) => resolver.resolve(policy.PolicyDocument) as PolicyDocument,
  );
  const managedArns = new Set((resolver.resolve(role.Properties?.ManagedPolicyArns ?? []) as string[]) ?? []);
  const attached = Object.entries(template.Resources)
    .filter(([logicalId, resource]) => {
      if (resource.Type !== 'AWS::IAM::Policy' && resource.Type !== 'AWS::IAM::ManagedPolicy') return false;
      const roles = (resolver.resolve(resource.Properties?.Roles ?? []) as string[]) ?? [];
      return (
        roles.includes(roleName) ||
        (resource.Type === 'AWS::IAM::ManagedPolicy' && managedArns.has(resolver.ref(logicalId)))
      );
    })
    .map(([, resource]) => resolver.resolve(resource.Properties?.PolicyDocument) as PolicyDocument);
  return [...inline, ...attached];
}

/** arn:aws:iam::ACCOUNT:role/PATH/NAME -> arn:aws:sts::ACCOUNT:assumed-role/NAME/SESSION */
function assumedRoleSessionArn(roleArn: string, sessionName: string, env: DeployedEnvironment): string {
  const roleName = roleArn.split('/').pop() ?? roleArn;
  return `arn:${env.partition}:sts::${env.accountId}:assumed-role/${roleName}/${sessionName}`;
}

// ---- What a request needs authorized -------------------------------------------------------

/** The authorizations a DynamoDB request needs, derived from its target and body. */
function checksFor(req: IncomingMessage, body: Buffer, tables: TableKeys[], env: DeployedEnvironment): Check[] {
  const target = header(req, 'x-amz-target');
  if (!target?.startsWith(TARGET_PREFIX)) return [];
  const operation = target.slice(TARGET_PREFIX.length);
  let input: Record<string, unknown>;
  try {
    input = JSON.parse(body.toString('utf8') || '{}') as Record<string, unknown>;
  } catch {
    return []; // DynamoDB (dynalite) answers a SerializationException before any authorization
  }
  if (input === null || typeof input !== 'object') return [];
  const tableArn = (tableName: string) =>
    `arn:${env.partition}:dynamodb:${env.region}:${env.accountId}:table/${tableName}`;
  const keysOf = (tableName: unknown) => tables.find((table) => table.tableName === tableName);
  const itemCheck = (action: string, tableName: unknown, key: unknown): Check => {
    const table = keysOf(tableName);
    const value = table ? attributeString((key as Item | undefined)?.[table.partitionKey]) : undefined;
    return {
      action: `dynamodb:${action}`,
      resource: tableArn(String(tableName)),
      ...(value !== undefined ? { leadingKeys: [value] } : {}),
    };
  };

  switch (operation) {
    case 'GetItem':
    case 'UpdateItem':
    case 'DeleteItem':
      return [itemCheck(operation, input.TableName, input.Key)];
    case 'PutItem':
      return [itemCheck(operation, input.TableName, input.Item)];
    case 'Query':
    case 'Scan': {
      const resource = tableArn(String(input.TableName)) + (input.IndexName ? `/index/${String(input.IndexName)}` : '');
      const table = keysOf(input.TableName);
      const leadingKeys =
        operation === 'Query' && !input.IndexName && table ? queryPartitionKeys(input, table.partitionKey) : [];
      return [{ action: `dynamodb:${operation}`, resource, ...(leadingKeys.length ? { leadingKeys } : {}) }];
    }
    case 'BatchGetItem':
    case 'BatchWriteItem':
      return Object.entries((input.RequestItems as Record<string, unknown>) ?? {}).map(([tableName, requests]) => {
        const items =
          operation === 'BatchGetItem'
            ? (((requests as { Keys?: Item[] }).Keys ?? []) as Item[])
            : ((requests as { PutRequest?: { Item: Item }; DeleteRequest?: { Key: Item } }[]) ?? []).map(
                (request) => request.PutRequest?.Item ?? request.DeleteRequest?.Key ?? {},
              );
        const table = keysOf(tableName);
        const values = table ? distinct(items.map((item) => attributeString(item[table.partitionKey]))) : [];
        return {
          action: `dynamodb:${operation}`,
          resource: tableArn(tableName),
          ...(values.length ? { leadingKeys: values } : {}),
        };
      });
    case 'TransactGetItems':
    case 'TransactWriteItems': {
      const actions: Record<string, string> = {
        Get: 'GetItem',
        Put: 'PutItem',
        Update: 'UpdateItem',
        Delete: 'DeleteItem',
        ConditionCheck: 'ConditionCheckItem',
      };
      return ((input.TransactItems as Record<string, { TableName?: string; Key?: Item; Item?: Item }>[]) ?? []).flatMap(
        (entry) =>
          Object.entries(entry)
            .filter(([kind]) => kind in actions)
            .map(([kind, request]) => itemCheck(actions[kind]!, request.TableName, request.Key ?? request.Item)),
      );
    }
    default: {
      // Table-level and account-level operations (DescribeTable, ListTables, ...): the action on the table, or on *.
      const resource =
        typeof input.TableName === 'string'
          ? tableArn(input.TableName)
          : typeof input.ResourceArn === 'string'
            ? input.ResourceArn
            : '*';
      return [{ action: `dynamodb:${operation}`, resource }];
    }
  }
}

/** The partition-key values a Query names: `#pk = :pk` (KeyConditionExpression) or legacy KeyConditions EQ. */
function queryPartitionKeys(input: Record<string, unknown>, partitionKey: string): string[] {
  const names = (input.ExpressionAttributeNames as Record<string, string> | undefined) ?? {};
  const values = (input.ExpressionAttributeValues as Item | undefined) ?? {};
  const found: (string | undefined)[] = [];
  if (typeof input.KeyConditionExpression === 'string') {
    const equality = /(#?[\w.-]+)\s*=\s*(:\w+)|(:\w+)\s*=\s*(#?[\w.-]+)/g;
    for (const match of input.KeyConditionExpression.matchAll(equality)) {
      const name = match[1] ?? match[4]!;
      const attribute = name.startsWith('#') ? names[name] : name;
      if (attribute === partitionKey) found.push(attributeString(values[(match[2] ?? match[3])!]));
    }
  }
  const legacy = (
    input.KeyConditions as
      | Record<string, { ComparisonOperator?: string; AttributeValueList?: AttributeValue[] }>
      | undefined
  )?.[partitionKey];
  if (legacy?.ComparisonOperator === 'EQ') found.push(attributeString(legacy.AttributeValueList?.[0]));
  return distinct(found);
}

/** A key attribute's value as IAM sees it in dynamodb:LeadingKeys. */
function attributeString(value: AttributeValue | undefined): string | undefined {
  return value?.S ?? value?.N ?? value?.B;
}

const distinct = (values: (string | undefined)[]): string[] => [
  ...new Set(values.filter((value) => value !== undefined)),
];

// ---- HTTP ----------------------------------------------------------------------------------

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** An error answered the way DynamoDB answers it (JSON 1.0, coral type, request id, CRC32). */
function answerError(res: ServerResponse, type: string, message: string, status = 400): void {
  const body = Buffer.from(JSON.stringify({ __type: `com.amazon.coral.service#${type}`, Message: message }));
  res.writeHead(status, {
    'Content-Type': JSON_1_0,
    'Content-Length': body.length,
    'x-amzn-RequestId': requestId(),
    'x-amz-crc32': String(crc32(body)),
  });
  res.end(body);
}

/** DynamoDB's request ids: 52 uppercase letters and digits. */
function requestId(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  return Array.from(randomBytes(52), (byte) => alphabet[byte % alphabet.length]).join('');
}

/** Sends the request, unchanged, to the store and pipes its answer back. */
function forward(req: IncomingMessage, body: Buffer, upstream: URL, res: ServerResponse): void {
  const outgoing = httpRequest(
    { hostname: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  outgoing.on('error', (error) => {
    if (!res.headersSent) answerError(res, 'InternalServerError', `The store is unreachable: ${error.message}`, 500);
    else res.destroy();
  });
  outgoing.end(body);
}
