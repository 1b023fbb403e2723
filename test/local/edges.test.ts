/** The local API answers JSON on every edge, even where Node's HTTP parser refuses the request. */
import { connect, createServer } from 'node:net';
import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalApi } from '../../local/server.ts';
import { startTestApi, useTestApi } from '../support/localApi.ts';
import { fetchApi } from '../support/http.ts';
import { PARSER_EDGE_REQUESTS } from '../support/rawHttp.ts';
import { assertDocumented } from '../support/contract.ts';

const KEY = 'edges-test-key';
const local = useTestApi(KEY);

const auth = { Authorization: `Bearer ${KEY}` };

/** Sends raw bytes and reads until the server closes (bounded by a timeout). */
function raw(
  request: string,
  to: number = local.port,
): Promise<{ status: number; headers: Record<string, string>; body: string; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = connect(to, '127.0.0.1', () => socket.write(request));
    let data = '';
    // A safety timeout: fails the exchange when the server never closes.
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no close within 5 s; got ${JSON.stringify(data)}`));
    }, 5_000);
    socket.on('data', (chunk) => (data += String(chunk)));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      const [head = '', body = ''] = data.split('\r\n\r\n', 2);
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(
        lines.map((line) => [line.split(':')[0]!.toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
      );
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body, closed: true });
    });
  });
}

describe('requests Node refuses before any handler', () => {
  it.each(PARSER_EDGE_REQUESTS)(
    'answers %s with a JSON Error and an X-Request-Id, declared in openapi.json, and closes',
    async (_, request, status, code) => {
      const res = await raw(request);
      expectEdgeError(res, status, code);
    },
  );
});

/** An edge answer: the JSON Error of `code`, with a request id, as openapi.json declares it, and the connection closed. */
function expectEdgeError(res: Awaited<ReturnType<typeof raw>>, status: number, code: string): void {
  expect(res.status, res.body).toBe(status);
  expect(res.headers['content-type']).toBe('application/json');
  expect(res.headers.connection).toBe('close');
  expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.body));
  const body = JSON.parse(res.body) as unknown;
  expect(body).toEqual({ code, message: expect.any(String), status });
  assertDocumented('GET', undefined, { status, headers: res.headers, body });
}

describe('a client that sends its headers too slowly', () => {
  const HEADERS_TIMEOUT_MS = 300;
  let slow: LocalApi;
  beforeAll(async () => {
    slow = await startTestApi(KEY, {}, { headersTimeoutMs: HEADERS_TIMEOUT_MS });
  });
  afterAll(async () => {
    await slow?.close();
  });

  it("gets 408 REQUEST_TIMEOUT in the Error shape once the server's headers timeout passes, and the connection closes", async () => {
    const started = Date.now();
    // The request line and one header, then nothing: the blank line that ends the headers never comes.
    const res = await raw('GET /v1/pets HTTP/1.1\r\nHost: x\r\n', Number(new URL(slow.url).port));
    expectEdgeError(res, 408, 'REQUEST_TIMEOUT');
    expect(Date.now() - started).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS);
  });
});

/** Sends raw bytes, reads until the server closes, and splits what came into its answers, in order. */
async function answers(
  request: string,
  { halfClose = false } = {},
): Promise<{ status: number; body: unknown; connection?: string }[]> {
  const data = await new Promise<Buffer>((resolve, reject) => {
    // `halfClose`: the client ends its side (FIN) right after the request, as `nc -N` does.
    const socket = connect(local.port, '127.0.0.1', () => (halfClose ? socket.end(request) : socket.write(request)));
    const chunks: Buffer[] = [];
    // A safety timeout: fails the exchange when the server never closes.
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no close within 5 s; got ${JSON.stringify(Buffer.concat(chunks).toString())}`));
    }, 5_000);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    });
  });
  const parsed = [];
  let rest = data.toString('latin1');
  while (rest.length > 0) {
    const headEnd = rest.indexOf('\r\n\r\n');
    expect(headEnd, `an answer head in ${JSON.stringify(rest)}`).toBeGreaterThan(0);
    const [statusLine = '', ...lines] = rest.slice(0, headEnd).split('\r\n');
    const headers = new Map(
      lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
    );
    const length = Number(headers.get('content-length'));
    const body = rest.slice(headEnd + 4, headEnd + 4 + length);
    parsed.push({
      status: Number(statusLine.split(' ')[1]),
      body: JSON.parse(body) as unknown,
      connection: headers.get('connection'),
    });
    rest = rest.slice(headEnd + 4 + length);
  }
  return parsed;
}

describe('answers on one connection', () => {
  it('answers a body longer than its Content-Length first, then the leftover bytes, each a 400', async () => {
    const body = JSON.stringify({ name: 'Rex', categoryId: 1 });
    const got = await answers(
      `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\n${body}`,
    );
    // The first answer is the create's: '{"nam' is malformed JSON.
    expect(got[0]).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED', status: 400 } });
    // Then, if anything, a 400 for bytes that are not a request line, and the connection closes.
    expect(got.length).toBeLessThanOrEqual(2);
    if (got[1])
      expect(got[1]).toEqual({
        status: 400,
        body: { code: 'VALIDATION_FAILED', message: expect.any(String), status: 400 },
        connection: 'close',
      });
  });

  it('answers pipelined requests in order, an unknown method last with 501', async () => {
    const got = await answers(
      `GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\n\r\n` +
        'GET /v1/pets HTTP/1.1\r\nHost: x\r\n\r\n' +
        'BREW /v1/pets HTTP/1.1\r\nHost: x\r\n\r\n',
    );
    expect(got.map((answer) => answer.status)).toEqual([200, 401, 501]);
    expect(got[2]).toMatchObject({ body: { code: 'NOT_IMPLEMENTED' }, connection: 'close' });
  });

  it.each([false, true])(
    'answers Content-Length with Transfer-Encoding, pipelined behind pending answers, with 400 after them (client half-closed: %s)',
    async (halfClose) => {
      for (let round = 0; round < 5; round++) {
        const got = await answers(
          `GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\n\r\n`.repeat(2) +
            `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
          { halfClose },
        );
        expect(got.map((answer) => answer.status)).toEqual([200, 200, 400]);
        expect(got[2]).toMatchObject({ body: { code: 'VALIDATION_FAILED' }, connection: 'close' });
      }
    },
  );

  it("answers an unknown method right after a complete body with 501, after the body's own answer", async () => {
    const body = JSON.stringify({ name: 'Rex', categoryId: 1 });
    const got = await answers(
      `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}` +
        'BREW /v1/pets HTTP/1.1\r\nHost: x\r\n\r\n',
    );
    expect(got.map((answer) => answer.status)).toEqual([201, 501]);
  });

  it.each(['hello\r\n\r\n', '{"name":"Rex"}\r\n\r\n', 'GET\r\n\r\n'])(
    'answers bytes that are not a request line (%j) with 400',
    async (bytes) => {
      const got = await answers(bytes);
      expect(got).toEqual([
        {
          status: 400,
          body: { code: 'VALIDATION_FAILED', message: expect.any(String), status: 400 },
          connection: 'close',
        },
      ]);
    },
  );
});

describe('doubled and trailing slashes, routed as API Gateway routes them (tools/local-kit/src/requestTarget.ts routingSegments)', () => {
  it.each(['/v1/pets/', '/v1//pets', '/v1/pets//', '//v1/pets', '/v1///pets///'])(
    'serves GET %s as GET /v1/pets',
    async (path) => {
      const res = await fetchApi(`http://127.0.0.1:${local.port}${path}`, { headers: auth });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(Array.isArray(res.body)).toBe(true);
    },
  );

  it('serves GET /v1/pets/{petId}/ and /v1//pets//{petId} as GET /v1/pets/{petId}', async () => {
    const created = await fetchApi(`${local.api.url}/pets`, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Slashy', categoryId: 1 }),
    });
    expect(created.status).toBe(201);
    for (const path of [`/v1/pets/${created.body.id}/`, `/v1//pets//${created.body.id}`]) {
      const res = await fetchApi(`http://127.0.0.1:${local.port}${path}`, { headers: auth });
      expect(res.status, path).toBe(200);
      expect(res.body).toMatchObject({ id: created.body.id, name: 'Slashy' });
    }
  });

  it("answers another method on /v1/pets/ 405 with the deployed API's message, and an unknown path 404 with its message", async () => {
    const refused = await fetchApi(`http://127.0.0.1:${local.port}/v1/pets/`, { method: 'DELETE', headers: auth });
    expect(refused.status).toBe(405);
    expect(refused.headers.get('allow')).toBe('GET, POST');
    expect(refused.body.message).toBe('The method DELETE is not allowed on /v1/pets; allowed: GET, POST.');
    const onPet = await fetchApi(`http://127.0.0.1:${local.port}/v1/pets/7/`, { method: 'PUT', headers: auth });
    expect(onPet.body.message).toBe('The method PUT is not allowed on /v1/pets/{petId}; allowed: GET.');
    const unknown = await fetchApi(`http://127.0.0.1:${local.port}/v1/nothing/`, { headers: auth });
    expect(unknown.body).toEqual({ code: 'NOT_FOUND', message: 'No resource exists at this path.', status: 404 });
  });
});

describe('paths and links', () => {
  it.each(['/v1/pets/%', '/v1/pets/%zz', '/v1/pets/%E0%A4%A', '/v1/pets/%C0%AF'])(
    'answers 400, not 5xx, for %s',
    async (path) => {
      const res = await fetchApi(`http://127.0.0.1:${local.port}${path}`, { headers: auth });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('VALIDATION_FAILED');
    },
  );

  it('builds the next link on the listen address whatever Host the client sends', async () => {
    for (let i = 0; i < 2; i++) {
      await fetchApi(`${local.api.url}/pets`, {
        method: 'POST',
        headers: { ...auth, 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: `L${i}`, categoryId: 1 }),
      });
    }
    const res = await raw(
      `GET /v1/pets?limit=1 HTTP/1.1\r\nHost: evil.example\r\nAuthorization: Bearer ${KEY}\r\nConnection: close\r\n\r\n`,
    );
    expect(res.status).toBe(200);
    expect(res.headers.link).toMatch(new RegExp(`^<${local.api.url}/pets\\?limit=1&cursor=`));
  });
});

describe('commands', () => {
  /** Runs a command in its own process (asynchronously: this process serves the store it may reach). */
  const tsx = (args: string[], env: Record<string, string> = {}) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      const childEnv: Record<string, string | undefined> = { ...process.env, ...env };
      delete childEnv.DYNAMODB_ENDPOINT;
      execFile(
        process.execPath,
        ['--import', 'tsx', ...args],
        { env: childEnv, timeout: 60_000 },
        (error, stdout, stderr) =>
          resolve({ status: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }),
      );
    });

  it('npm start on a port in use says which, and how to choose another', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const taken = (blocker.address() as { port: number }).port;
    try {
      const run = await tsx(['local/server.ts'], { PORT: String(taken), PETSTORE_IN_MEMORY: '1' });
      expect(run.status).toBe(1);
      expect(run.stderr).toContain(`Port ${taken} on 127.0.0.1 is already in use`);
      expect(run.stderr).toContain('PORT=');
      expect(run.stderr).not.toMatch(/\n\s+at /);
    } finally {
      blocker.close();
    }
  });

  it('npm run invoke -- --help prints the usage', async () => {
    const run = await tsx(['scripts/invoke.ts', '--help']);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^Usage: npm run invoke/);
  });

  it('npm run invoke with a missing event file says so in one line', async () => {
    const run = await tsx(['scripts/invoke.ts', 'listPets', '--event', 'events/nope.json']);
    expect(run.status).toBe(2);
    expect(run.stderr.trim()).toBe('Cannot read the event file events/nope.json (ENOENT).');
  });
});
