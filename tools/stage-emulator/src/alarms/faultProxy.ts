/**
 * A loopback HTTP proxy in front of dynalite that injects faults into real DynamoDB client calls:
 * the SDK, its retries, timeouts and error parsing all run for real; only the wire misbehaves.
 * `npm run load`, the tests and the alarm rehearsal start it; with `answered`, it also tells each
 * answer as the caller sees it (the rehearsal's DynamoDB metrics, ./recorders.ts).
 *
 * - `hang`: accept the request and never answer (a paused store).
 * - `reset`: drop the connection on the request (connection reset).
 * - `error500`: answer 500 InternalServerError without forwarding.
 * - `throttle` / `throughput`: answer 400 ThrottlingException / ProvisionedThroughputExceededException.
 * - `dropAnswer`: forward the request (the write happens) and never deliver the answer.
 * - `indexPartitionLimit`: a PutItem whose Item carries `keyAttribute` is admitted only while the
 *   token bucket of that attribute's value has a token (`writesPerSecond` a second, holding at most
 *   one second's worth), else answered 400 ProvisionedThroughputExceededException: how DynamoDB
 *   throttles writes to one partition-key value of a GSI (the table's write is refused with it).
 *
 * A fault applies to requests whose `X-Amz-Target` operation and body match, `times` times
 * (default: until cleared); everything else is forwarded untouched.
 */
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type FaultKind =
  | 'hang'
  | 'reset'
  | 'error500'
  | 'throttle'
  | 'throughput'
  | 'dropAnswer'
  | 'indexPartitionLimit';

interface Fault {
  kind: FaultKind;
  /** DynamoDB operations to affect, e.g. ['PutItem']; all when unset. */
  operations?: string[];
  /** Only requests whose body mentions this (e.g. a table name); all when unset. */
  bodyIncludes?: string;
  /** Only requests to these tables (their `TableName`, or a batch's or transaction's); all when unset. */
  tables?: string[];
  /** How many matching requests to affect; unlimited when unset. */
  times?: number;
  /** `indexPartitionLimit`: the index partition-key attribute whose values are rate-limited. */
  keyAttribute?: string;
  /** `indexPartitionLimit`: writes a second each value admits. */
  writesPerSecond?: number;
}

/** One DynamoDB call and the answer its caller got (a fault's, or the store's). */
export interface StoreCall {
  /** The `X-Amz-Target` operation, e.g. `PutItem`. */
  operation: string;
  /** The tables the request names. */
  tables: string[];
  status: number;
  /** The error's `__type` without its namespace, e.g. `ProvisionedThroughputExceededException`. */
  errorType?: string;
  /** The capacity each table consumed, when the store said (see `startFaultProxy`'s `answered`). */
  consumed: { tableName: string; capacityUnits: number }[];
}

export interface FaultProxyOptions {
  /**
   * Told of every answer delivered (not of a hang, a reset or a dropped answer). To know the capacity
   * each call consumed, the proxy asks the store for it (`ReturnConsumedCapacity: TOTAL` where the
   * caller asked for none): the caller's answer then carries a `ConsumedCapacity` it did not ask for.
   */
  answered?: (call: StoreCall) => void;
}

export interface FaultProxy {
  endpoint: string;
  fault: Fault | undefined;
  /** Requests the proxy affected so far. */
  injected: number;
  /** Called with every request's operation and body as it arrives (tests count what the store was asked). */
  observe: ((operation: string, body: Buffer) => void) | undefined;
  close(): Promise<void>;
}

const errorBodies: Partial<Record<FaultKind, [number, string]>> = {
  error500: [500, 'InternalServerError'],
  throttle: [400, 'ThrottlingException'],
  throughput: [400, 'ProvisionedThroughputExceededException'],
  indexPartitionLimit: [400, 'ProvisionedThroughputExceededException'],
};

interface TokenBucket {
  tokens: number;
  at: number;
}

/** Whether the write's index key value still has a token (taking it); writes without the key always pass. */
function admitted(
  { keyAttribute, writesPerSecond = 1 }: Fault,
  body: Buffer,
  buckets: Map<string, TokenBucket>,
): boolean {
  const item = (JSON.parse(body.toString('utf8')) as { Item?: Record<string, { S?: string; N?: string }> }).Item ?? {};
  const key = keyAttribute ? item[keyAttribute] : undefined;
  const value = key?.S ?? key?.N;
  if (value === undefined) return true;
  const now = performance.now();
  const bucket = buckets.get(value) ?? { tokens: writesPerSecond, at: now };
  bucket.tokens = Math.min(writesPerSecond, bucket.tokens + ((now - bucket.at) / 1000) * writesPerSecond);
  bucket.at = now;
  buckets.set(value, bucket);
  if (bucket.tokens < 1) return false;
  bucket.tokens -= 1;
  return true;
}

export async function startFaultProxy(target: string, options: FaultProxyOptions = {}): Promise<FaultProxy> {
  const { answered } = options;
  const upstream = new URL(target);
  const sockets = new Set<Socket>();
  const proxy: FaultProxy = {
    endpoint: '',
    fault: undefined,
    injected: 0,
    observe: undefined,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const buckets = new Map<string, TokenBucket>();
  const matching = (request: IncomingMessage, body: Buffer): Fault | undefined => {
    const fault = proxy.fault;
    if (!fault || fault.times === 0) return undefined;
    const operation = operationOf(request);
    if (fault.operations && !fault.operations.includes(operation)) return undefined;
    if (fault.bodyIncludes && !body.includes(fault.bodyIncludes)) return undefined;
    if (fault.tables && !tablesOf(body).some((table) => fault.tables?.includes(table))) return undefined;
    if (fault.kind === 'indexPartitionLimit' && (operation !== 'PutItem' || admitted(fault, body, buckets)))
      return undefined;
    if (fault.times !== undefined) fault.times--;
    proxy.injected++;
    return fault;
  };

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      proxy.observe?.(operationOf(request), body);
      const fault = matching(request, body);
      const tell = answered && told(answered, operationOf(request), body);
      if (!fault) return forward(request, tell ? withConsumedCapacity(body) : body, response, tell);
      const error = errorBodies[fault.kind];
      if (error) {
        const sent = answer(response, error[0], error[1]);
        tell?.(error[0], Buffer.from(sent));
        return;
      }
      if (fault.kind === 'reset') return request.socket.resetAndDestroy();
      if (fault.kind === 'dropAnswer') return forward(request, body, undefined);
      // hang: keep the connection open and say nothing.
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  function forward(
    request: IncomingMessage,
    body: Buffer,
    response: ServerResponse | undefined,
    tell?: (status: number, answerBody: Buffer) => void,
  ): void {
    const outgoing = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: request.method,
        path: request.url,
        // The body may have grown (withConsumedCapacity): it goes whole, with its length.
        headers: {
          ...Object.fromEntries(Object.entries(request.headers).filter(([name]) => name !== 'transfer-encoding')),
          'content-length': String(body.length),
        },
      },
      (answer) => {
        if (!response) return answer.resume();
        const status = answer.statusCode ?? 502;
        response.writeHead(status, answer.headers);
        const chunks: Buffer[] = [];
        if (tell) answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => tell?.(status, Buffer.concat(chunks)));
        answer.pipe(response);
      },
    );
    outgoing.on('error', () => response?.destroy());
    outgoing.end(body);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return proxy;
}

const operationOf = (request: IncomingMessage): string =>
  String(request.headers['x-amz-target'] ?? '')
    .split('.')
    .at(-1) ?? '';

function answer(response: ServerResponse, status: number, type: string): string {
  const body = JSON.stringify({ __type: `com.amazonaws.dynamodb.v20120810#${type}`, message: `injected ${type}` });
  response.writeHead(status, {
    'Content-Type': 'application/x-amz-json-1.0',
    'Content-Length': Buffer.byteLength(body),
  });
  response.end(body);
  return body;
}

interface CallBody {
  TableName?: string;
  RequestItems?: Record<string, unknown>;
  TransactItems?: Record<string, { TableName?: string }>[];
  ReturnConsumedCapacity?: string;
}

function parsed(body: Buffer): CallBody {
  try {
    const value = JSON.parse(body.toString('utf8')) as unknown;
    return value !== null && typeof value === 'object' ? (value as CallBody) : {};
  } catch {
    return {};
  }
}

/** The tables a request names: its TableName, a batch's RequestItems, a transaction's items. */
function tablesOf(body: Buffer): string[] {
  const call = parsed(body);
  const named = [
    call.TableName,
    ...Object.keys(call.RequestItems ?? {}),
    ...(call.TransactItems ?? []).flatMap((item) => Object.values(item).map((action) => action?.TableName)),
  ];
  return [...new Set(named.filter((name): name is string => typeof name === 'string'))];
}

/** The request asking the store for the capacity it consumes, unless the caller asked already. */
function withConsumedCapacity(body: Buffer): Buffer {
  const call = parsed(body);
  if (call.ReturnConsumedCapacity !== undefined || !Object.keys(call).length) return body;
  return Buffer.from(JSON.stringify({ ...call, ReturnConsumedCapacity: 'TOTAL' }));
}

/** How one call's answer is told: its status, error type and consumed capacity, read from the answer's body. */
function told(answered: (call: StoreCall) => void, operation: string, body: Buffer) {
  const tables = tablesOf(body);
  return (status: number, answerBody: Buffer) => {
    const reply = parsed(answerBody) as {
      __type?: string;
      ConsumedCapacity?:
        | { TableName?: string; CapacityUnits?: number }
        | { TableName?: string; CapacityUnits?: number }[];
    };
    const consumed = [reply.ConsumedCapacity ?? []]
      .flat()
      .flatMap(({ TableName, CapacityUnits }) =>
        TableName && typeof CapacityUnits === 'number' ? [{ tableName: TableName, capacityUnits: CapacityUnits }] : [],
      );
    const errorType = reply.__type?.split('#').at(-1);
    answered({ operation, tables, status, ...(errorType ? { errorType } : {}), consumed });
  };
}
