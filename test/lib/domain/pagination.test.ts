import { createHmac } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { ApiError } from '../../../lib/domain/errors.ts';
import { timeOrderedId } from '../../../lib/domain/ids.ts';
import { CursorCodec, fixedSecret } from '../../../lib/domain/pagination.ts';
import { nextPageLink } from '../../../lib/http/responses.ts';

const SECRET = 'a-secret-of-at-least-16-bytes';
const codec = new CursorCodec(fixedSecret(SECRET));

/** A cursor over `payload` signed with the codec's own secret: only the payload can be wrong. */
function signed(payload: string): string {
  const body = Buffer.from(payload).toString('base64url');
  return `${body}.${createHmac('sha256', SECRET).update(body).digest('base64url')}`;
}

describe('CursorCodec', () => {
  it('round-trips the last id for the same status filter', async () => {
    expect(await codec.decode(await codec.encode(42, 'sold'), 'sold')).toBe(42);
    expect(await codec.decode(await codec.encode(7, undefined), undefined)).toBe(7);
    expect(await codec.decode(await codec.encode(1, 'available'), 'available')).toBe(1);
  });

  it('reads a cursor signed with its secret (the test helper signs as the codec does)', async () => {
    expect(await codec.decode(signed('{"v":1,"id":9,"status":null}'), undefined)).toBe(9);
    expect(await codec.decode(signed('{"v":2,"k":"0","id":9,"status":"sold"}'), 'sold')).toBe(9);
  });

  it('gives a version 2 cursor naming the secret that signed it, "0" for a fixed secret', async () => {
    const cursor = await codec.encode(42, 'sold');
    expect(JSON.parse(Buffer.from(cursor.split('.')[0]!, 'base64url').toString('utf8'))).toEqual({
      v: 2,
      k: '0',
      id: 42,
      status: 'sold',
    });
    expect(cursor).toBe(signed('{"v":2,"k":"0","id":42,"status":"sold"}'));
  });

  it.each([
    ['for another status', async () => codec.decode(await codec.encode(42, 'sold'), 'pending')],
    ['for a status when made without', async () => codec.decode(await codec.encode(42, undefined), 'sold')],
    [
      'from another secret',
      async () =>
        codec.decode(await new CursorCodec(fixedSecret('another-secret-entirely')).encode(1, undefined), undefined),
    ],
    ['of garbage', async () => codec.decode('%%%', undefined)],
    ['with an extra part', async () => codec.decode(`${await codec.encode(1, undefined)}.x`, undefined)],
    [
      'with a signature of the wrong length',
      async () => codec.decode(`${(await codec.encode(1, undefined)).split('.')[0]}.AAAA`, undefined),
    ],
    ['signed, whose id is 0', async () => codec.decode(signed('{"v":1,"id":0,"status":null}'), undefined)],
    [
      'signed, whose id is not an integer',
      async () => codec.decode(signed('{"v":1,"id":1.5,"status":null}'), undefined),
    ],
    ['signed, whose id is a string', async () => codec.decode(signed('{"v":1,"id":"7","status":null}'), undefined)],
    [
      'with its signature left off',
      async () => codec.decode((await codec.encode(1, undefined)).split('.')[0]!, undefined),
    ],
    [
      'signed, of version 2 naming no secret',
      async () => codec.decode(signed('{"v":2,"id":7,"status":null}'), undefined),
    ],
    [
      'signed, of version 3 naming its secret',
      async () => codec.decode(signed('{"v":3,"k":"0","id":7,"status":null}'), undefined),
    ],
    [
      'signed, of no version naming its secret',
      async () => codec.decode(signed('{"k":"0","id":7,"status":null}'), undefined),
    ],
    ['signed, that is not JSON', async () => codec.decode(signed('{"v":1,'), undefined)],
  ])('rejects a cursor %s with a 400', async (_case, attempt) => {
    await expect(attempt()).rejects.toMatchObject({
      status: 400,
      code: 'VALIDATION_FAILED',
      message: "Invalid query: 'cursor' is not a cursor this service gave for this query.",
    });
    await expect(attempt()).rejects.toBeInstanceOf(ApiError);
  });

  /** The signature's spellings that Node's lenient decoder reads as the same 32 bytes. */
  it.each<[string, (signature: string) => string]>([
    ['padded', (signature) => `${signature}=`],
    ['in the +/ alphabet', (signature) => signature.replaceAll('-', '+').replaceAll('_', '/')],
    ['with a character outside the alphabet', (signature) => `${signature.slice(0, 10)}!${signature.slice(10)}`],
    ['with a trailing space', (signature) => `${signature} `],
    [
      "with its last character's unused bits set",
      (signature) => signature.slice(0, -1) + BASE64URL[BASE64URL.indexOf(signature.at(-1)!) | 0b11],
    ],
  ])('takes only the canonical spelling of a signature: rejects it %s', async (_case, respell) => {
    const cursor = await firstCursorWith((signature) => respell(signature) !== signature);
    const [body, signature] = cursor.split('.') as [string, string];
    expect(Buffer.from(respell(signature), 'base64url')).toEqual(Buffer.from(signature, 'base64url'));
    expect(await codec.decode(cursor, undefined)).toBeGreaterThan(0);
    await expect(codec.decode(`${body}.${respell(signature)}`, undefined)).rejects.toMatchObject({ status: 400 });
  });

  it('refuses a secret shorter than 16 bytes, and takes one of 16', async () => {
    await expect(new CursorCodec(fixedSecret('short')).encode(1, undefined)).rejects.toThrow(/16 bytes/);
    await expect(new CursorCodec(fixedSecret('0123456789abcde')).encode(1, undefined)).rejects.toThrow(/16 bytes/);
    const sixteen = new CursorCodec(fixedSecret('0123456789abcdef'));
    expect(await sixteen.decode(await sixteen.encode(3, undefined), undefined)).toBe(3);
  });
});

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** The cursor of the first id whose signature `fits` (its bytes, so its characters, depend on the id). */
async function firstCursorWith(fits: (signature: string) => boolean): Promise<string> {
  for (let id = 1; ; id += 1) {
    const cursor = await codec.encode(id, undefined);
    if (fits(cursor.split('.')[1]!)) return cursor;
  }
}

describe('nextPageLink', () => {
  it('keeps limit and status, then the cursor', () => {
    expect(nextPageLink('https://h/v1/pets', { limit: 5, status: 'sold' }, 'c.d')).toBe(
      '<https://h/v1/pets?limit=5&status=sold&cursor=c.d>; rel="next"',
    );
    expect(nextPageLink('https://h/v1/pets', { limit: 20 }, 'c')).toBe(
      '<https://h/v1/pets?limit=20&cursor=c>; rel="next"',
    );
  });
});

describe('timeOrderedId', () => {
  it('gives positive safe integers that grow with time', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const first = timeOrderedId();
      vi.advanceTimersByTime(5);
      const second = timeOrderedId();
      for (const id of [first, second]) expect(Number.isSafeInteger(id) && id > 0).toBe(true);
      expect(second).toBeGreaterThan(first);
    } finally {
      vi.useRealTimers();
    }
  });
});
