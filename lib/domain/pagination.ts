/**
 * Opaque, signed page cursors (the `Link: rel="next"` header that carries them is lib/http/responses.ts).
 * A cursor names the last pet of a page, the status filter it was made for and the id of the secret
 * that signed it; the HMAC makes a tampered or foreign cursor detectable, so it is answered with 400
 * and never reaches the table. Verification uses the secret the cursor names, among those accepted
 * now: a rotated secret's cursors keep working through the rotation's overlap (lib/store/cursorSecret.ts).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Deadline } from './deadline.ts';
import { ApiError } from './errors.ts';
import type { PetStatus } from './schemas.ts';

interface CursorPayload {
  /** 2: signed by the secret `k` names; 1 (before secrets had ids): signed by `UNNAMED_SECRET_ID`'s. */
  v: 1 | 2;
  k?: string;
  id: number;
  status: PetStatus | null;
}

interface CursorSecret {
  id: string;
  value: string;
}

/** The secrets in use now: new cursors are signed with `signing`; a cursor verifies only with the accepted secret it names. */
export interface CursorKeyring {
  signing: CursorSecret;
  accepted: readonly CursorSecret[];
}

/**
 * The id of a secret that was given none: a configured one (PETSTORE_CURSOR_SECRET) or the control
 * table's secret from before ids. Cursors of the first format (v1, no id) are verified as this id's.
 */
export const UNNAMED_SECRET_ID = '0';

/** One fixed secret (configuration, local use), under `UNNAMED_SECRET_ID`. */
export function fixedSecret(value: string): SecretSource {
  const secret = { id: UNNAMED_SECRET_ID, value };
  return async () => ({ signing: secret, accepted: [secret] });
}

const invalidCursor = () =>
  new ApiError('VALIDATION_FAILED', "Invalid query: 'cursor' is not a cursor this service gave for this query.");

/**
 * Where the secrets come from: configuration locally, the control table when deployed. A source that
 * reads them waits no longer than the caller's `deadline`, if given.
 */
export type SecretSource = (deadline?: Deadline) => Promise<CursorKeyring>;

export class CursorCodec {
  readonly #secret: SecretSource;

  constructor(secret: SecretSource) {
    this.#secret = secret;
  }

  /** A cursor for the page after `lastId`; `deadline` bounds the wait for the secrets (the request's). */
  async encode(lastId: number, status: PetStatus | undefined, deadline?: Deadline): Promise<string> {
    const { signing } = await this.#secret(deadline);
    const payload: CursorPayload = { v: 2, k: signing.id, id: lastId, status: status ?? null };
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return `${body}.${sign(body, signing).toString('base64url')}`;
  }

  /** The id after which the next page starts; throws 400 unless this codec made the cursor for `status`. */
  async decode(cursor: string, status: PetStatus | undefined, deadline?: Deadline): Promise<number> {
    const [body, signature, ...rest] = cursor.split('.');
    if (!body || !signature || rest.length > 0) throw invalidCursor();
    const bodyBytes = canonicalBase64url(body);
    const given = canonicalBase64url(signature);
    if (!bodyBytes || !given) throw invalidCursor();
    // Read before the signature is checked only to pick the secret; nothing else of it is trusted until then.
    const payload = parsePayload(bodyBytes.toString('utf8'));
    if (!payload) throw invalidCursor();
    const secretId = payload.v === 1 ? UNNAMED_SECRET_ID : payload.k;
    const secret = (await this.#secret(deadline)).accepted.find((each) => each.id === secretId);
    if (!secret) throw invalidCursor();
    const expected = sign(body, secret);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalidCursor();
    if (payload.status !== (status ?? null)) throw invalidCursor();
    return payload.id;
  }
}

/**
 * The bytes `text` spells, only when it is their one canonical base64url spelling: Node's decoder
 * skips characters outside the alphabet, takes padding and the `+/` alphabet, and ignores a last
 * character's unused bits, so a cursor spelled otherwise would pass as the cursor it decodes to.
 */
function canonicalBase64url(text: string): Buffer | undefined {
  const bytes = Buffer.from(text, 'base64url');
  return bytes.toString('base64url') === text ? bytes : undefined;
}

/** The shortest cursor secret that signs: HMAC-SHA256 keyed with fewer bytes is guessable. */
export const MIN_CURSOR_SECRET_BYTES = 16;

function sign(body: string, { value }: CursorSecret): Buffer {
  if (Buffer.byteLength(value) < MIN_CURSOR_SECRET_BYTES)
    throw new Error(`The cursor secret must be at least ${MIN_CURSOR_SECRET_BYTES} bytes.`);
  return createHmac('sha256', value).update(body).digest();
}

function parsePayload(json: string): CursorPayload | undefined {
  try {
    const value: unknown = JSON.parse(json);
    if (typeof value !== 'object' || value === null) return undefined;
    const { v, k, id, status } = value as Record<string, unknown>;
    if (v !== 1 && !(v === 2 && typeof k === 'string')) return undefined;
    if (!Number.isSafeInteger(id) || (id as number) < 1) return undefined;
    if (status !== null && typeof status !== 'string') return undefined;
    return value as CursorPayload;
  } catch {
    return undefined;
  }
}
