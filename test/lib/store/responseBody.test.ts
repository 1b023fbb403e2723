/** The AWS clients' response body collector (lib/store/responseBody.ts), on real Node streams and real HTTP responses. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, get, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { collectResponseBody } from '../../../lib/store/responseBody.ts';

const CHUNKS = ['{"Items":[', '{"id":{"N":"1"}},'.repeat(2_000), '{"id":{"N":"2"}}]}'];

/** A loopback server: `/chunks` answers CHUNKS one write at a time, `/empty` nothing, `/cut` half a body, then drops the socket. */
let server: Server;
let origin: string;
beforeAll(async () => {
  server = createServer(async (request, response) => {
    if (request.url === '/empty') return void response.end();
    if (request.url === '/cut') {
      response.writeHead(200, { 'Content-Length': '100' });
      response.write('{"Items":[');
      return void setTimeout(() => response.socket?.destroy(), 20);
    }
    for (const chunk of CHUNKS) {
      response.write(chunk);
      await new Promise((flushed) => setTimeout(flushed, 5));
    }
    response.end();
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((closed) => server.close(() => closed())));

const responseTo = (path: string) => new Promise<IncomingMessage>((answered, failed) => get(`${origin}${path}`, answered).on('error', failed));
const text = (bytes: Uint8Array) => Buffer.from(bytes).toString('utf8');

describe('collectResponseBody', () => {
  it('collects a body that arrives in several chunks, in order, into one new array of its own', async () => {
    const response = await responseTo('/chunks');
    let chunks = 0;
    response.on('data', () => (chunks += 1));
    const bytes = await collectResponseBody(response);
    expect(chunks).toBeGreaterThan(1);
    expect(text(bytes)).toBe(CHUNKS.join(''));
    // Not a view into a larger buffer (the socket's), as the SDK's collector guarantees too.
    expect(Buffer.isBuffer(bytes)).toBe(false);
    expect([bytes.byteOffset, bytes.buffer.byteLength]).toEqual([0, bytes.byteLength]);
  });

  it('collects an empty body as an empty array', async () => {
    expect((await collectResponseBody(await responseTo('/empty'))).byteLength).toBe(0);
  });

  it('collects a stream of strings as their UTF-8 bytes', async () => {
    expect(text(await collectResponseBody(Readable.from(['pé', 'ts'])))).toBe('péts');
  });

  it('fails when the connection drops before the body has ended', async () => {
    await expect(collectResponseBody(await responseTo('/cut'))).rejects.toThrow();
  });

  it("fails with the stream's own error", async () => {
    const body = new Readable({ read() {} });
    const collected = collectResponseBody(body);
    body.destroy(new Error('the socket broke'));
    await expect(collected).rejects.toThrow('the socket broke');
  });

  it('fails when the stream closes before its end without an error, where waiting would last until a timeout', async () => {
    const body = new Readable({ read() {} });
    const collected = collectResponseBody(body);
    body.push('{"Items":[');
    body.destroy();
    await expect(collected).rejects.toThrow('The response body closed before its end.');
  });

  it('refuses a body that is not a Node.js stream, naming what it is', async () => {
    await expect(collectResponseBody(new Uint8Array(1))).rejects.toThrow(new TypeError('The response body is not a Node.js stream (Uint8Array).'));
    await expect(collectResponseBody(undefined)).rejects.toThrow('(undefined)');
  });
});
