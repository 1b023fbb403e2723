/** The `Idempotency-Key` request header (createPet); what a key buys is lib/store/idempotency.ts. */
import { ApiError } from '../domain/errors.ts';

const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';

const PRINTABLE_ASCII = /^[\x20-\x7e]{1,255}$/;

/** The request's Idempotency-Key, if it sent one; 400 when it is not 1 to 255 printable ASCII characters. */
export function idempotencyKeyOf(headers: Record<string, string | undefined> | null): string | undefined {
  const key = headers?.[IDEMPOTENCY_KEY_HEADER];
  if (key === undefined) return undefined;
  if (!PRINTABLE_ASCII.test(key)) {
    throw new ApiError(
      'VALIDATION_FAILED',
      'Invalid header: Idempotency-Key must be 1 to 255 printable ASCII characters.',
    );
  }
  return key;
}
