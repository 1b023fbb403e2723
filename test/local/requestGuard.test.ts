/**
 * Nothing a client sends ends the local API or goes unanswered: any request target, any method
 * (CONNECT included), an `Upgrade` header, a connection the client half-closes after its request.
 * Over raw sockets, since no HTTP client sends these as written.
 */
import { describe, expect, it, vi } from 'vitest';
import { fetchApi } from '../support/http.ts';
import { useTestApi } from '../support/localApi.ts';
import { rawExchange, type RawAnswer } from '../support/rawHttp.ts';

/** A path where the local API's own code throws, standing for a bug of ours; every other path is served as it is. */
const BUG_PATH = '/docs/throws-for-the-test';
vi.mock('../../local/docs.ts', async (importOriginal) => {
  const docs = await importOriginal<typeof import('../../local/docs.ts')>();
  return {
    ...docs,
    docsAnswer: (pathname: string, apiUrl: string) => {
      if (pathname === BUG_PATH) throw new Error('a bug of the local API');
      return docs.docsAnswer(pathname, apiUrl);
    },
  };
});

const KEY = 'request-guard-test-key';
const local = useTestApi(KEY);

const auth = { Authorization: `Bearer ${KEY}` };

function expectError(answer: RawAnswer, status: number, code: string): void {
  expect(answer.status, answer.body).toBe(status);
  expect(answer.headers['content-type']).toBe('application/json');
  expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  expect(JSON.parse(answer.body)).toEqual({ code, message: expect.any(String), status });
}

/** The process is alive and serving: an authenticated list answers 200. */
async function expectStillServing(): Promise<void> {
  const listed = await fetchApi(`${local.api.url}/pets`, { headers: auth });
  expect(listed.status).toBe(200);
}

describe('any request target, any method', () => {
  it.each([
    // Own keys only: names every object inherits are no documentation asset.
    ['GET /docs/constructor', 'GET /docs/constructor HTTP/1.1\r\nHost: x\r\n\r\n', 404, 'NOT_FOUND'],
    ['GET /docs/__proto__', 'GET /docs/__proto__ HTTP/1.1\r\nHost: x\r\n\r\n', 404, 'NOT_FOUND'],
    ['GET /docs/toString', 'GET /docs/toString HTTP/1.1\r\nHost: x\r\n\r\n', 404, 'NOT_FOUND'],
    ['GET //', 'GET // HTTP/1.1\r\nHost: x\r\n\r\n', 404, 'NOT_FOUND'],
    // A target is a path, not a reference resolved against one: `//x/v1/pets` is no route.
    [
      'GET //x/v1/pets',
      `GET //x/v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\n\r\n`,
      404,
      'NOT_FOUND',
    ],
    ['GET http://[', 'GET http://[ HTTP/1.1\r\nHost: x\r\n\r\n', 400, 'VALIDATION_FAILED'],
    ['OPTIONS *', 'OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n', 400, 'VALIDATION_FAILED'],
    [
      'POST //[ with a body',
      'POST //[ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
      404,
      'NOT_FOUND',
    ],
    [
      'CONNECT example.com:443',
      'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n',
      400,
      'VALIDATION_FAILED',
    ],
    [
      'Upgrade: websocket',
      'GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
      404,
      'NOT_FOUND',
    ],
  ])('answers %s with an Error, and serves on', async (_, request, status, code) => {
    expectError(await rawExchange(local.port, request), status, code);
    await expectStillServing();
  });

  it('serves an absolute-form target by its path, as HTTP/1.1 servers must accept it', async () => {
    const answer = await rawExchange(
      local.port,
      `GET http://elsewhere.example/v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\n\r\n`,
    );
    expect(answer.status, answer.body).toBe(200);
  });

  it('serves a request with an Upgrade header as a plain request', async () => {
    const answer = await rawExchange(
      local.port,
      `GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`,
    );
    expect(answer.status, answer.body).toBe(200);
    expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('a bug of the local API itself', () => {
  it('is answered 500 INTERNAL with the request id, logged as one JSON line, and the API serves on', async () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const answer = await rawExchange(local.port, `GET ${BUG_PATH} HTTP/1.1\r\nHost: x\r\n\r\n`);
      expect(answer.status, answer.body).toBe(500);
      const requestId = answer.headers['x-request-id'];
      expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
      expect(JSON.parse(answer.body)).toEqual({
        code: 'INTERNAL',
        message: expect.any(String),
        status: 500,
        requestId,
      });
      expect(answer.body).not.toContain('a bug of the local API');
      expect(logged).toHaveBeenCalledTimes(1);
      const line = String(logged.mock.calls[0]?.[0]);
      expect(line).not.toContain('\n');
      expect(JSON.parse(line)).toMatchObject({ level: 'ERROR', requestId, error: 'Error: a bug of the local API' });
    } finally {
      logged.mockRestore();
    }
    await expectStillServing();
  });
});

describe('a client that half-closes after its request', () => {
  it('gets the answer to its POST, then the connection closes; the pet is stored once', async () => {
    const name = `Half-open ${Date.now()}`;
    const body = JSON.stringify({ name, categoryId: 1 });
    const answer = await rawExchange(
      local.port,
      `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      { halfClose: true },
    );
    expect(answer.status, answer.body).toBe(201);
    expect(JSON.parse(answer.body)).toMatchObject({ name, categoryId: 1 });
    expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(answer.closedByServer).toBe(true);
    const listed = await fetchApi(`${local.api.url}/pets?limit=100`, { headers: auth });
    expect((listed.body as { name: string }[]).filter((pet) => pet.name === name)).toHaveLength(1);
  });

  it('gets a 400 when it half-closes before its body is all sent; nothing is stored', async () => {
    const name = `Cut short ${Date.now()}`;
    const body = JSON.stringify({ name, categoryId: 1 });
    const answer = await rawExchange(
      local.port,
      `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body) + 10}\r\n\r\n${body}`,
      { halfClose: true },
    );
    expectError(answer, 400, 'VALIDATION_FAILED');
    expect(JSON.parse(answer.body).message).toBe('The connection was closed before the request was complete.');
    expect(answer.closedByServer).toBe(true);
    const listed = await fetchApi(`${local.api.url}/pets?limit=100`, { headers: auth });
    expect((listed.body as { name: string }[]).filter((pet) => pet.name === name)).toHaveLength(0);
  });
});
