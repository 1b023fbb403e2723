/**
 * Rotating the cursor secret (`npm run keys -- rotate-cursor-secret`) on dynalite, with instances
 * on a fake clock: cursors name their secret; instances never disagree on a cursor through a
 * rotation; the replaced secret verifies until the overlap ends and never after, busy or idle; the
 * cursors of before secret ids (v1) are accepted until their secret retires.
 */
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { CursorCodec } from '../../../lib/domain/pagination.ts';
import {
  CURSOR_SECRET_OVERLAP_MS,
  CURSOR_SECRET_PROPAGATION_MS,
  controlTableCursorSecret,
} from '../../../lib/store/cursorSecret.ts';
import { createDocumentClient } from '../../../lib/store/dynamo.ts';
import { ensureControlTable } from '../../../local/embeddedStore.ts';
import { EXIT_FAILED, EXIT_OK, runKeys } from '../../../tools/keys/keys.ts';
import { useEmbeddedStore } from '../../support/store.ts';

const endpoint = useEmbeddedStore();
let documents: DynamoDBDocumentClient;
beforeAll(() => {
  documents = createDocumentClient({ endpoint: endpoint() });
});
afterAll(() => documents.destroy());

let at: number;
let tableName: string;
beforeEach(async () => {
  at = Date.parse('2025-06-01T00:00:00Z');
  tableName = `control-rotation-${Math.random().toString(36).slice(2)}`;
  await ensureControlTable(endpoint(), tableName);
});

/** An instance of listPets: its own cache of the secrets, on the fake clock. */
const instance = () => new CursorCodec(controlTableCursorSecret({ documents, tableName, now: () => at }));

async function rotate(): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runKeys(['rotate-cursor-secret', '--stage', 'staging', '--table', tableName], {
    client: documents,
    out: (line) => out.push(line),
    err: (line) => err.push(line),
    env: {},
    now: () => new Date(at),
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const secretIdOf = (cursor: string) =>
  (JSON.parse(Buffer.from(cursor.split('.')[0]!, 'base64url').toString()) as { k?: string }).k;
const accepts = (codec: CursorCodec, cursor: string) =>
  codec.decode(cursor, undefined).then(
    () => true,
    () => false,
  );

describe('rotating the cursor secret', () => {
  it('keeps every instance agreeing on every cursor, then retires the old secret after the overlap', async () => {
    const early = instance();
    const before = await early.encode(1, undefined);
    const oldId = secretIdOf(before);
    expect(oldId).toBeDefined();

    at += 60_000;
    const rotated = await rotate();
    expect(rotated.code).toBe(EXIT_OK);
    const newId = /secret ([0-9a-f]{8}) signs/.exec(rotated.out)?.[1];
    expect(newId).toBeDefined();
    const rotatedAt = at;

    // Until the new secret signs, every instance signs with the old one and all accept both.
    const late = instance();
    for (; at < rotatedAt + CURSOR_SECRET_PROPAGATION_MS; at += 30_000) {
      for (const codec of [early, late]) {
        const cursor = await codec.encode(2, undefined);
        expect(secretIdOf(cursor)).toBe(oldId);
        expect(await accepts(early, cursor)).toBe(true);
        expect(await accepts(late, cursor)).toBe(true);
      }
    }
    // From then on the new one signs everywhere; cursors of the old one are accepted until the overlap ends.
    at = rotatedAt + CURSOR_SECRET_PROPAGATION_MS;
    const after = await early.encode(3, undefined);
    expect(secretIdOf(after)).toBe(newId);
    expect(secretIdOf(await late.encode(3, undefined))).toBe(newId);
    expect(await accepts(late, after)).toBe(true);
    at = rotatedAt + CURSOR_SECRET_PROPAGATION_MS + CURSOR_SECRET_OVERLAP_MS - 1;
    expect(await accepts(early, before)).toBe(true);
    at += 1;
    expect(await accepts(early, before)).toBe(false);
    expect(await accepts(late, before)).toBe(false);
    expect(await accepts(late, after)).toBe(true);
  });

  it('an idle instance that read before the rotation refuses the retired secret once the overlap is over', async () => {
    const idle = instance();
    const before = await idle.encode(1, undefined);
    await rotate();
    at += CURSOR_SECRET_PROPAGATION_MS + CURSOR_SECRET_OVERLAP_MS;
    expect(await accepts(idle, before)).toBe(false);
    expect(await accepts(instance(), await idle.encode(1, undefined))).toBe(true);
  });

  it('accepts a cursor of the format before secret ids until its secret retires', async () => {
    const codec = instance();
    await codec.encode(1, undefined);
    const { Item } = await documents.send(
      new GetCommand({ TableName: tableName, Key: { pk: 'cursor-secret', sk: 'current' } }),
    );
    const body = Buffer.from(JSON.stringify({ v: 1, id: 41, status: null })).toString('base64url');
    const v1 = `${body}.${createHmac('sha256', String(Item?.value)).update(body).digest('base64url')}`;
    await expect(codec.decode(v1, undefined)).resolves.toBe(41);
    await rotate();
    at += CURSOR_SECRET_PROPAGATION_MS + 60_000;
    await expect(codec.decode(v1, undefined)).resolves.toBe(41);
    at += CURSOR_SECRET_OVERLAP_MS;
    await expect(codec.decode(v1, undefined)).rejects.toMatchObject({ status: 400 });
  });

  it('refuses a second rotation until the first one signs, and says when; then rotates again', async () => {
    await instance().encode(1, undefined);
    expect((await rotate()).code).toBe(EXIT_OK);
    at += 60_000;
    const again = await rotate();
    expect(again.code).toBe(EXIT_FAILED);
    expect(again.err).toMatch(/signs only from \d{4}-.*Z; rotate after that/);
    at += CURSOR_SECRET_PROPAGATION_MS;
    expect((await rotate()).code).toBe(EXIT_OK);
  });

  it('says there is nothing to rotate before listPets made a secret', async () => {
    const run = await rotate();
    expect(run.code).toBe(EXIT_FAILED);
    expect(run.err).toMatch(/no cursor secret/);
  });
});
