/**
 * Bearer authentication (RFC 6750) in the pipeline: the `Authorization` header read, its key checked
 * against the service's `ApiKeyStore` (lib/domain/apiKeys.ts), the caller set on the request's context
 * (./proxy.ts), where the operation and the request log read it. Anything else is a 401 with a challenge.
 */
import { digestKey, matchingKey, type ApiKeyStore, type Caller } from '../domain/apiKeys.ts';
import type { Deadline } from '../domain/deadline.ts';
import { ApiError } from '../domain/errors.ts';
import { scopeAllows, scopeRefused } from '../domain/keyScope.ts';
import { INVALID_KEY, callerFromVerdict } from './authorizerVerdict.ts';
import type { ProxyMiddleware } from './proxy.ts';

export const AUTH_REALM = 'petstore';

/**
 * RFC 6750's `Bearer 1*SP b64token`, the scheme in any case (RFC 7235), nothing after the token. The
 * web ACL counts every spelling of one key this accepts as that key (infra/constructs/firewall.ts).
 */
const B64TOKEN = '[A-Za-z0-9\\-._~+/]+=*';
const BEARER = new RegExp(`^Bearer +(${B64TOKEN})$`, 'i');

/** Whether `key` can be sent as `Bearer <key>`: an RFC 6750 b64token (no space, no comma, no colon). */
export const isBearerToken = (key: string): boolean => new RegExp(`^${B64TOKEN}$`).test(key);
/** HTTP's optional white space around a field value (RFC 9110 5.6.3): the only blanks stripped, as HTTP parsers do. */
const OWS = /^[ \t]+|[ \t]+$/g;

const unauthorized = (message: string, tokenPresented: boolean) =>
  new ApiError('UNAUTHORIZED', message, {
    'WWW-Authenticate': tokenPresented
      ? `Bearer realm="${AUTH_REALM}", error="invalid_token"`
      : `Bearer realm="${AUTH_REALM}"`,
  });

/** Resolves to the key's id (as `npm run keys -- list` shows it) when `authorization` carries a valid key; throws a 401 otherwise. */
export async function authenticate(authorization: string | undefined, keys: ApiKeyStore): Promise<string> {
  return (await authenticateCaller(authorization, keys)).keyId;
}

/**
 * The caller when `authorization` carries a valid key, unexpired at `now`; throws a 401 otherwise.
 * The keys are waited for until `deadline`, if given.
 */
export async function authenticateCaller(
  authorization: string | undefined,
  keys: ApiKeyStore,
  deadline?: Deadline,
  now?: number,
): Promise<Caller> {
  return callerWithToken(bearerToken(authorization), keys, deadline, now);
}

const invalidKey = () => unauthorized('The API key is invalid.', true);

/** The caller whose key is `token`, checked against `keys`; throws a 401 when they do not hold it, or it has expired. */
async function callerWithToken(token: string, keys: ApiKeyStore, deadline?: Deadline, now?: number): Promise<Caller> {
  const digest = digestKey(token);
  const matched = await matchingKey(digest, keys, deadline, now);
  if (matched === undefined) throw invalidKey();
  return { digest, ...matched };
}

/**
 * The one `Authorization` value of a request (header names lower-cased); more than one is a 401: a
 * request must not name one key to API Gateway's authorizer and another to the function.
 */
export function onlyAuthorization(
  headers: Record<string, string | undefined> | null | undefined,
  multiValueHeaders: Record<string, string[] | undefined> | null | undefined,
): string | undefined {
  const values = multiValueHeaders?.authorization;
  if (values && values.length > 1) throw unauthorized('Send one Authorization header, not several.', true);
  return headers?.authorization;
}

/** The token of a well-formed `Bearer` header; throws the 401 that says what is wrong otherwise. */
function bearerToken(authorization: string | undefined): string {
  const header = authorization?.replace(OWS, '') ?? '';
  if (header === '') throw unauthorized('Missing Authorization header; send "Authorization: Bearer <API_KEY>".', false);
  // A tab (or another blank) after the scheme: RFC 6750 separates it from the token by spaces only.
  if (/^Bearer[^\S ]/i.test(header)) {
    throw unauthorized(
      'Separate the Bearer scheme from the key with a space: "Authorization: Bearer <API_KEY>".',
      false,
    );
  }
  if (!/^Bearer( |$)/i.test(header)) throw unauthorized('The Authorization scheme must be Bearer.', false);
  const token = BEARER.exec(header)?.[1];
  if (!token) {
    const empty = header.replace(/^Bearer/i, '').trim() === '';
    throw unauthorized(empty ? 'The bearer token is empty.' : 'The API key is invalid.', !empty);
  }
  return token;
}

/**
 * Authenticates every request (header names already lower-cased), setting its context's caller: by
 * the key authorizer's verdict when it is fresh and about this request's token (./authorizerVerdict.ts),
 * else against `keys`, read within the request's deadline.
 */
export function bearerAuth(keys: ApiKeyStore, now: () => number = Date.now): ProxyMiddleware {
  return {
    before: async ({ event, context }) => {
      const { headers, multiValueHeaders, requestContext } = event;
      // The header is read once: a malformed one is the same 401 whether or not a verdict came with it.
      const token = bearerToken(onlyAuthorization(headers, multiValueHeaders));
      const at = now();
      const verdict = callerFromVerdict(requestContext?.authorizer, token, keys, at);
      if (verdict === INVALID_KEY) throw invalidKey();
      context.caller = verdict ?? (await callerWithToken(token, keys, context.deadline, at));
    },
  };
}

/**
 * Refuses 403 a caller whose key's scope does not allow `method` (the route's): the authorizer's
 * policy already does on AWS; this is the function's own check, and the local API's only one.
 */
export function requireScope(method: string): ProxyMiddleware {
  return {
    before: ({ context }) => {
      if (context.caller !== undefined && !scopeAllows(context.caller.scope, method)) throw scopeRefused();
    },
  };
}
