/**
 * Reading the bearer token (lib/http/auth.ts) header by header: which 401 each malformed or
 * unknown header earns (its message and challenge), which spellings of a good one pass, and who the
 * caller then is. test/functions/auth.test.ts holds the same through the handlers.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { StaticApiKeys } from '../../../lib/domain/apiKeys.ts';
import { ApiError } from '../../../lib/domain/errors.ts';
import { authenticate, authenticateCaller } from '../../../lib/http/auth.ts';

/** Every character RFC 6750's b64token allows, and its trailing padding. */
const KEY = 'aZ09-._~+/key==';
const keys = new StaticApiKeys([KEY]);
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest();

const REALM = 'Bearer realm="petstore"';
const INVALID = 'Bearer realm="petstore", error="invalid_token"';
const MISSING = 'Missing Authorization header; send "Authorization: Bearer <API_KEY>".';
const SCHEME = 'The Authorization scheme must be Bearer.';
const EMPTY = 'The bearer token is empty.';
const UNKNOWN = 'The API key is invalid.';
const SEPARATE = 'Separate the Bearer scheme from the key with a space: "Authorization: Bearer <API_KEY>".';

async function rejection(header: string | undefined): Promise<ApiError> {
  const error = await authenticateCaller(header, keys).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describe('authenticateCaller', () => {
  it.each<[string, string | undefined, string, string]>([
    ['no header', undefined, MISSING, REALM],
    ['an empty header', '', MISSING, REALM],
    ['a header of blanks', '   ', MISSING, REALM],
    ['another scheme', 'Basic dXNlcjpwYXNz', SCHEME, REALM],
    ['the key glued to the scheme', `Bearer${KEY}`, SCHEME, REALM],
    ['the scheme not first', `xBearer ${KEY}`, SCHEME, REALM],
    ['a tab after the scheme', `Bearer\t${KEY}`, SEPARATE, REALM],
    ['a non-breaking space after the scheme', `Bearer\u00a0${KEY}`, SEPARATE, REALM],
    ['a non-breaking space before the scheme (HTTP strips only spaces and tabs)', `\u00a0Bearer ${KEY}`, SCHEME, REALM],
    ['a non-breaking space after the key', `Bearer ${KEY}\u00a0`, UNKNOWN, INVALID],
    ['the scheme alone', 'Bearer', EMPTY, REALM],
    ['the scheme alone, in lower case, with blanks', 'bearer   ', EMPTY, REALM],
    ['an unknown key', 'Bearer not-the-key', UNKNOWN, INVALID],
    ['a token of illegal characters', 'Bearer a,b', UNKNOWN, INVALID],
    ['padding inside the token', 'Bearer aZ09=key', UNKNOWN, INVALID],
    ['the scheme twice', `Bearer Bearer ${KEY}`, UNKNOWN, INVALID],
    ['a second token after the key', `Bearer ${KEY} more`, UNKNOWN, INVALID],
  ])('refuses %s with its message and challenge', async (_case, header, message, challenge) => {
    const error = await rejection(header);
    expect(error.toBody()).toEqual({ code: 'UNAUTHORIZED', message, status: 401 });
    expect(error.headers).toEqual({ 'WWW-Authenticate': challenge });
  });

  it.each([
    ['the usual spelling', `Bearer ${KEY}`],
    ['the scheme in another case', `bEARER ${KEY}`],
    ['several spaces after the scheme', `Bearer   ${KEY}`],
    ['blanks around the header', `  Bearer ${KEY}  `],
    ['tabs around the header (HTTP strips them too)', `\tBearer ${KEY}\t`],
  ])('accepts %s, and the caller is the key digest and its 12-digit id', async (_case, header) => {
    const digest = sha256(KEY);
    expect(await authenticateCaller(header, keys)).toEqual({
      digest,
      keyId: digest.toString('hex').slice(0, 12),
      scope: 'write',
    });
  });

  it('accepts a key without padding', async () => {
    const caller = await authenticateCaller('Bearer plain', new StaticApiKeys(['plain']));
    expect(caller.digest).toEqual(sha256('plain'));
  });
});

describe('authenticate', () => {
  it("resolves to the key's id and refuses what authenticateCaller refuses", async () => {
    expect(await authenticate(`Bearer ${KEY}`, keys)).toBe(sha256(KEY).toString('hex').slice(0, 12));
    await expect(authenticate('Bearer not-the-key', keys)).rejects.toMatchObject({ status: 401, message: UNKNOWN });
  });
});
