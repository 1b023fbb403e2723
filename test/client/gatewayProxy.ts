/**
 * A loopback HTTP proxy in front of the local API that stands where API Gateway stands: it records every
 * request the client sends (with its Idempotency-Key and the status it got) and can answer some of them
 * itself, as the gateway does (429 throttling, 5xx with `x-amzn-RequestId`), or cut the connection.
 * Everything else goes to the local API untouched.
 */
import { randomUUID } from 'node:crypto';
import { createServer, request as httpRequest, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

type GatewayFault =
  | {
      kind: 'answer';
      status: number;
      code: string;
      retryAfter?: string;
      body?: Record<string, unknown>;
      headers?: Record<string, string>;
      times: number;
    }
  | { kind: 'reset'; times: number };

interface SeenRequest {
  method: string;
  path: string;
  idempotencyKey: string | undefined;
  /** When it arrived (ms since the epoch). */
  at: number;
  answeredBy: 'proxy' | 'api' | 'reset';
  status?: number;
  /** The x-amzn-RequestId the proxy answered with. */
  gatewayRequestId?: string;
}

export interface GatewayProxy {
  /** The base URL to give the client (ends in /v1). */
  url: string;
  /** Faults applied in order: the first with `times` left answers the next request. */
  faults: GatewayFault[];
  seen: SeenRequest[];
  close(): Promise<void>;
}

export async function startGatewayProxy(apiUrl: string): Promise<GatewayProxy> {
  const upstream = new URL(apiUrl);
  const sockets = new Set<Socket>();
  const proxy: GatewayProxy = {
    url: '',
    faults: [],
    seen: [],
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const seen: SeenRequest = {
        method: request.method ?? 'GET',
        path: request.url ?? '/',
        idempotencyKey: request.headers['idempotency-key'] as string | undefined,
        at: Date.now(),
        answeredBy: 'api',
      };
      proxy.seen.push(seen);
      const fault = proxy.faults.find((each) => each.times > 0);
      if (fault) fault.times--;
      if (fault?.kind === 'reset') {
        seen.answeredBy = 'reset';
        return request.socket.resetAndDestroy();
      }
      if (fault?.kind === 'answer') return answerAsGateway(response, fault, seen);
      const outgoing = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: request.method,
          path: request.url,
          headers: request.headers,
        },
        (answer) => {
          seen.status = answer.statusCode;
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(response);
        },
      );
      outgoing.on('error', () => response.destroy());
      outgoing.end(Buffer.concat(chunks));
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${upstream.pathname}`;
  return proxy;
}

function answerAsGateway(
  response: ServerResponse,
  fault: Extract<GatewayFault, { kind: 'answer' }>,
  seen: SeenRequest,
): void {
  const requestId = randomUUID();
  const body = JSON.stringify({
    code: fault.code,
    message: `injected ${fault.code}`,
    status: fault.status,
    ...fault.body,
  });
  seen.answeredBy = 'proxy';
  seen.status = fault.status;
  seen.gatewayRequestId = requestId;
  response.writeHead(fault.status, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(body),
    'x-amzn-RequestId': requestId,
    ...(fault.retryAfter ? { 'Retry-After': fault.retryAfter } : {}),
    ...fault.headers,
  });
  response.end(body);
}
