/**
 * Opaque, signed page cursors (the `Link: rel="next"` header that carries them is lib/http/responses.ts).
 * A cursor names the last pet of a page and the status filter it was made for; the HMAC makes a
 * tampered or foreign cursor detectable, so it is answered with 400 and never reaches the table.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { ApiError } from './errors.ts';
import type { PetStatus } from './schemas.ts';

interface CursorPayload {
  v: 1;
  id: number;
  status: PetStatus | null;
}

const invalidCursor = () =>
  new ApiError('VALIDATION_FAILED', "Invalid query: 'cursor' is not a cursor this service gave for this query.");

/** Where the signing secret comes from: configuration locally, a secret store when deployed. */
export type SecretSource = () => Promise<string>;

export class CursorCodec {
  readonly #secret: SecretSource;

  constructor(secret: SecretSource) {
    this.#secret = secret;
  }

  async encode(lastId: number, status: PetStatus | undefined): Promise<string> {
    const payload: CursorPayload = { v: 1, id: lastId, status: status ?? null };
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return `${body}.${(await this.#sign(body)).toString('base64url')}`;
  }

  /** The id after which the next page starts; throws 400 unless this codec made the cursor for `status`. */
  async decode(cursor: string, status: PetStatus | undefined): Promise<number> {
    const [body, signature, ...rest] = cursor.split('.');
    if (!body || !signature || rest.length > 0) throw invalidCursor();
    const given = Buffer.from(signature, 'base64url');
    const expected = await this.#sign(body);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalidCursor();
    const payload = parsePayload(Buffer.from(body, 'base64url').toString('utf8'));
    if (!payload || payload.status !== (status ?? null)) throw invalidCursor();
    return payload.id;
  }

  async #sign(body: string): Promise<Buffer> {
    const secret = await this.#secret();
    if (Buffer.byteLength(secret) < 16) throw new Error('The cursor secret must be at least 16 bytes.');
    return createHmac('sha256', secret).update(body).digest();
  }
}

function parsePayload(json: string): CursorPayload | undefined {
  try {
    const value: unknown = JSON.parse(json);
    if (typeof value !== 'object' || value === null) return undefined;
    const { v, id, status } = value as Record<string, unknown>;
    if (v !== 1 || !Number.isSafeInteger(id) || (id as number) < 1) return undefined;
    if (status !== null && typeof status !== 'string') return undefined;
    return value as CursorPayload;
  } catch {
    return undefined;
  }
}
