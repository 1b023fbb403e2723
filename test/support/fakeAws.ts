/**
 * Test support: a small local stand-in for the parts of SSM Parameter Store and Secrets Manager the
 * service uses, as a real HTTP server on 127.0.0.1 speaking the AWS JSON 1.1 protocol, so tests use
 * real SDK clients and nothing in the SDK is mocked.
 *
 * It keeps parameters and secrets in memory, answers errors as AWS does (HTTP 400 with a `__type`
 * such as `ParameterNotFound`), paginates GetParametersByPath (at most 10 per page, as AWS), records
 * every request so tests can count them, and can be told to fail an operation.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import { SSMClient } from '@aws-sdk/client-ssm';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';

export type ParameterType = 'String' | 'StringList' | 'SecureString';

export interface FakeParameter {
  name: string;
  type: ParameterType;
  value: string;
  description?: string | undefined;
  version: number;
  lastModified: Date;
}

export interface RecordedRequest {
  /** The X-Amz-Target, for example `AmazonSSM.GetParametersByPath`. */
  target: string;
  input: Record<string, unknown>;
}

/** An error to answer with, as AWS would: `{"__type": type, "message": message}` with `status`. */
export interface FakeFailure {
  status: number;
  type: string;
  message?: string;
}

export interface FakeAws {
  readonly endpoint: string;
  readonly parameters: Map<string, FakeParameter>;
  readonly secrets: Map<string, string>;
  readonly requests: readonly RecordedRequest[];
  /** Requests received, all of them or those for one target. */
  count(target?: string): number;
  /** Puts a parameter directly, without a request. */
  putParameter(name: string, value: string, options?: { type?: ParameterType; description?: string }): void;
  /** Answers every request for `target` with `failure` from now on; `undefined` heals it. */
  failWith(target: string, failure: FakeFailure | undefined): void;
  close(): Promise<void>;
}

const REGION = 'us-east-1';
const ACCOUNT = '123456789012';
const JSON_11 = 'application/x-amz-json-1.1';

class AwsError extends Error {
  constructor(
    readonly type: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

const validation = (message: string) => new AwsError('ValidationException', message);

type Handler = (input: Record<string, unknown>) => unknown;

export async function startFakeAws(): Promise<FakeAws> {
  const parameters = new Map<string, FakeParameter>();
  const secrets = new Map<string, string>();
  const requests: RecordedRequest[] = [];
  const failures = new Map<string, FakeFailure>();

  const putParameter: FakeAws['putParameter'] = (name, value, { type = 'SecureString', description } = {}) => {
    const previous = parameters.get(name);
    parameters.set(name, { name, type, value, description, version: (previous?.version ?? 0) + 1, lastModified: new Date() });
  };

  const handlers: Record<string, Handler> = {
    'AmazonSSM.PutParameter': (input) => {
      const name = parameterName(input.Name);
      const value = requiredString(input, 'Value');
      if (value.length > 4096) throw validation('Standard tier parameters support a maximum parameter value of 4096 characters.');
      const description = optionalString(input, 'Description');
      if (description !== undefined && description.length > 1024) throw validation('Description must be at most 1024 characters.');
      const existing = parameters.get(name);
      if (existing && input.Overwrite !== true) {
        throw new AwsError(
          'ParameterAlreadyExists',
          'The parameter already exists. To overwrite this value, set the overwrite option in the request to true.',
        );
      }
      const type = input.Type ?? existing?.type;
      if (type !== 'String' && type !== 'StringList' && type !== 'SecureString') {
        throw validation('A parameter type is required when you create a parameter.');
      }
      putParameter(name, value, { type, description: description ?? existing?.description });
      return { Version: parameters.get(name)?.version, Tier: 'Standard' };
    },

    'AmazonSSM.GetParameter': (input) => {
      const parameter = parameters.get(parameterName(input.Name));
      if (!parameter) throw new AwsError('ParameterNotFound', '');
      return { Parameter: toWire(parameter, input.WithDecryption === true) };
    },

    'AmazonSSM.DeleteParameter': (input) => {
      const name = parameterName(input.Name);
      if (!parameters.delete(name)) throw new AwsError('ParameterNotFound', `Parameter ${name} not found.`);
      return {};
    },

    'AmazonSSM.GetParametersByPath': (input) => {
      const path = requiredString(input, 'Path');
      if (!path.startsWith('/')) throw validation('The parameter path must begin with a slash (/).');
      const found = under(path, input.Recursive === true);
      const page = paginate(found, input, 10);
      return { Parameters: page.items.map((p) => toWire(p, input.WithDecryption === true)), ...page.next };
    },

    'AmazonSSM.DescribeParameters': (input) => {
      const filters = Array.isArray(input.ParameterFilters) ? (input.ParameterFilters as Record<string, unknown>[]) : [];
      let found = [...parameters.values()].sort(byName);
      for (const filter of filters) {
        const values = Array.isArray(filter.Values) ? (filter.Values as unknown[]) : [];
        if (filter.Key !== 'Path' || values.length !== 1 || typeof values[0] !== 'string') {
          throw validation('This stand-in supports only a Path filter with one value.');
        }
        const recursive = filter.Option === 'Recursive';
        const names = new Set(under(values[0], recursive).map((p) => p.name));
        found = found.filter((p) => names.has(p.name));
      }
      const page = paginate(found, input, 50);
      return {
        Parameters: page.items.map((p) => ({
          Name: p.name,
          ARN: arn(p.name),
          Type: p.type,
          ...(p.description === undefined ? {} : { Description: p.description }),
          Version: p.version,
          LastModifiedDate: p.lastModified.getTime() / 1000,
          Tier: 'Standard',
          DataType: 'text',
        })),
        ...page.next,
      };
    },

    'secretsmanager.GetSecretValue': (input) => {
      const id = requiredString(input, 'SecretId');
      const name = id.startsWith('arn:') ? id.split(':secret:')[1]?.replace(/-[A-Za-z0-9]{6}$/, '') : id;
      const value = name === undefined ? undefined : secrets.get(name);
      if (name === undefined || value === undefined) {
        throw new AwsError('ResourceNotFoundException', "Secrets Manager can't find the specified secret.");
      }
      return {
        ARN: `arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:${name}-AbCdEf`,
        Name: name,
        VersionId: randomUUID(),
        SecretString: value,
        VersionStages: ['AWSCURRENT'],
        CreatedDate: Date.now() / 1000,
      };
    },
  };

  function under(path: string, recursive: boolean): FakeParameter[] {
    const prefix = path.endsWith('/') ? path : `${path}/`;
    return [...parameters.values()]
      .filter((p) => p.name.startsWith(prefix) && (recursive || !p.name.slice(prefix.length).includes('/')))
      .sort(byName);
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const body = await readBody(request);
    const target = request.headers['x-amz-target'];
    let status = 200;
    let answer: unknown;
    try {
      if (request.method !== 'POST' || typeof target !== 'string') throw new AwsError('UnknownOperationException', '');
      if (!String(request.headers['content-type']).startsWith(JSON_11)) {
        throw new AwsError('SerializationException', `Expected Content-Type ${JSON_11}.`);
      }
      if (!String(request.headers.authorization).startsWith('AWS4-HMAC-SHA256 Credential=')) {
        throw new AwsError('MissingAuthenticationTokenException', 'Missing Authentication Token');
      }
      let input: unknown;
      try {
        input = body === '' ? {} : JSON.parse(body);
      } catch {
        throw new AwsError('SerializationException', 'The request body is not JSON.');
      }
      if (typeof input !== 'object' || input === null) throw new AwsError('SerializationException', 'Expected a JSON object.');
      requests.push({ target, input: input as Record<string, unknown> });
      const failure = failures.get(target);
      if (failure) throw new AwsError(failure.type, failure.message ?? '', failure.status);
      const handler = handlers[target];
      if (!handler) throw new AwsError('UnknownOperationException', `The stand-in does not implement ${target}.`);
      answer = handler(input as Record<string, unknown>);
    } catch (error) {
      if (!(error instanceof AwsError)) throw error;
      status = error.status;
      answer = { __type: error.type, message: error.message };
    }
    const text = JSON.stringify(answer);
    response.writeHead(status, {
      'Content-Type': JSON_11,
      'Content-Length': Buffer.byteLength(text),
      'x-amzn-RequestId': randomUUID(),
    });
    response.end(text);
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      response.writeHead(500, { 'Content-Type': JSON_11 });
      response.end(JSON.stringify({ __type: 'InternalServerError', message: String(error) }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    parameters,
    secrets,
    requests,
    count: (target) => (target === undefined ? requests.length : requests.filter((r) => r.target === target).length),
    putParameter,
    failWith: (target, failure) => {
      if (failure) failures.set(target, failure);
      else failures.delete(target);
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/** Starts a stand-in for this file; call once at the top of a test file. */
export function useFakeAws(): () => FakeAws {
  let fake: FakeAws | undefined;
  beforeAll(async () => {
    fake = await startFakeAws();
  });
  afterAll(async () => {
    await fake?.close();
    fake = undefined;
  });
  return () => {
    if (!fake) throw new Error('useFakeAws() has not started yet');
    return fake;
  };
}

/** Never real credentials: the stand-in only checks that the request is signed. */
const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };

/** A real SSM client talking to the stand-in, configured as the service's own. */
export function fakeSsmClient(fake: FakeAws): SSMClient {
  return new SSMClient({ endpoint: fake.endpoint, region: REGION, credentials, maxAttempts: 3 });
}

export function fakeSecretsManagerClient(fake: FakeAws): SecretsManagerClient {
  return new SecretsManagerClient({ endpoint: fake.endpoint, region: REGION, credentials, maxAttempts: 3 });
}

function toWire(parameter: FakeParameter, decrypt: boolean) {
  // Without decryption AWS answers a SecureString with its ciphertext, base64: a reader that forgets
  // WithDecryption sees this, not the value.
  const value =
    parameter.type === 'SecureString' && !decrypt
      ? Buffer.from(`kms-ciphertext:${parameter.name}:${parameter.version}`).toString('base64')
      : parameter.value;
  return {
    Name: parameter.name,
    Type: parameter.type,
    Value: value,
    Version: parameter.version,
    LastModifiedDate: parameter.lastModified.getTime() / 1000,
    ARN: arn(parameter.name),
    DataType: 'text',
  };
}

function paginate<T>(items: T[], input: Record<string, unknown>, max: number) {
  const size = input.MaxResults ?? max;
  if (typeof size !== 'number' || !Number.isInteger(size) || size < 1 || size > max) {
    throw validation(`1 validation error detected: Value '${String(size)}' at 'maxResults' failed to satisfy constraint: Member must have value less than or equal to ${max}`);
  }
  let start = 0;
  if (input.NextToken !== undefined) {
    const decoded = typeof input.NextToken === 'string' ? Number(Buffer.from(input.NextToken, 'base64url').toString()) : NaN;
    if (!Number.isInteger(decoded) || decoded < 0 || decoded > items.length) throw new AwsError('InvalidNextToken', 'The specified token isn\'t valid.');
    start = decoded;
  }
  const end = start + size;
  return {
    items: items.slice(start, end),
    next: end < items.length ? { NextToken: Buffer.from(String(end)).toString('base64url') } : {},
  };
}

function parameterName(name: unknown): string {
  if (typeof name !== 'string' || name === '') throw validation('Parameter name is required.');
  if (!/^[a-zA-Z0-9_.\-/]+$/.test(name) || (name.includes('/') && !name.startsWith('/'))) {
    throw validation(`Parameter name: can't be prefixed with "aws" or "ssm" (case-insensitive). It must use only letters, numbers, or the following symbols: . (period), - (hyphen), _ (underscore). Special characters are not allowed. All sub-paths, if specified, must use the forward slash symbol "/". Valid example: /get/parameters2-/by1./path0_.`);
  }
  return name;
}

function requiredString(input: Record<string, unknown>, key: string): string {
  const value = input[key];
  if (typeof value !== 'string' || value === '') throw validation(`${key} is required.`);
  return value;
}

function optionalString(input: Record<string, unknown>, key: string): string | undefined {
  const value = input[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw validation(`${key} must be a string.`);
  return value;
}

const arn = (name: string) => `arn:aws:ssm:${REGION}:${ACCOUNT}:parameter${name.startsWith('/') ? '' : '/'}${name}`;

const byName = (a: FakeParameter, b: FakeParameter) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
