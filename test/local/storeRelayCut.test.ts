/**
 * A request cut mid-body on the persisted store's endpoint (a client of `.data/endpoint` that dies,
 * `npm run invoke` killed mid-send) ends that request only: the store's process lives on, no fault
 * is said or marked, and the local API goes on serving.
 */
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Pet } from '../../lib/domain/schemas.ts';
import { startServer, stopCleanly } from '../support/serverProcess.ts';

const KEY = 'relay-cut-test-key-0123456789';
const headers = { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' };
const CUTS = 5;

/** The process ids below `pid` (its children, theirs, ...), from /proc. */
function descendants(pid: number): number[] {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  return children.map(Number).flatMap((child) => [child, ...descendants(child)]);
}

/**
 * A DynamoDB PutItem sent to `port` with `Expect: 100-continue`: once the store answers `100
 * Continue` (its request handler has the request), half the body is sent and the connection cut.
 */
function cutMidBody(port: number): Promise<void> {
  const body = JSON.stringify({ TableName: 'pets', Item: { id: { N: '1' }, name: { S: 'x'.repeat(200) } } });
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () =>
      socket.write(
        `POST / HTTP/1.1\r\nHost: x\r\nX-Amz-Target: DynamoDB_20120810.PutItem\r\nContent-Type: application/x-amz-json-1.0\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`,
      ),
    );
    socket.once('data', (chunk) => {
      if (!String(chunk).startsWith('HTTP/1.1 100 Continue')) return reject(new Error(`answered ${String(chunk)}`));
      socket.write(body.slice(0, body.length / 2), () => {
        socket.destroy();
        resolve();
      });
    });
    socket.once('error', reject);
    socket.once('close', () => reject(new Error('the store closed the connection before 100 Continue')));
  });
}

describe("a request cut mid-body on the store's endpoint", () => {
  it('ends that request only: the store process lives, no fault is said or marked', { timeout: 60_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'petstore-relay-cut-'));
    const server = await startServer({ PETSTORE_DATA_DIR: dataDir, PETSTORE_API_KEYS: KEY });
    const storeProcesses = descendants(server.child.pid as number);
    expect(storeProcesses).toHaveLength(1);
    const { endpoint } = JSON.parse(readFileSync(join(dataDir, 'endpoint'), 'utf8')) as { endpoint: string };

    for (let cut = 0; cut < CUTS; cut++)
      await cutMidBody(Number(new URL(endpoint).port)).catch((error: Error) => {
        throw new Error(`cut ${cut + 1}: ${error.message}; the local API said: ${server.stderr()}`);
      });
    // Served after the cuts, every one, by the same store process.
    const created: Pet[] = [];
    for (let n = 0; n < 10; n++) {
      const res = await fetch(`${server.base}/pets`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: `After the cuts ${n}`, categoryId: 1 }),
      });
      expect(res.status, await res.clone().text()).toBe(201);
      created.push((await res.json()) as Pet);
    }
    expect(descendants(server.child.pid as number)).toEqual(storeProcesses);
    expect(server.stderr()).toBe('');
    expect(existsSync(join(dataDir, 'store-faulted'))).toBe(false);
    await stopCleanly(server);

    const next = await startServer({ PETSTORE_DATA_DIR: dataDir, PETSTORE_API_KEYS: KEY });
    for (const pet of created)
      expect(await (await fetch(`${next.base}/pets/${pet.id}`, { headers })).json()).toEqual(pet);
    await stopCleanly(next);
    expect(next.stderr()).toBe('');
  });
});
