/**
 * The requests the bench sends: API Gateway proxy events with the bench's key, as the local API
 * builds them, and each bundle's first invocation in a cold request.
 */
import { verdictContext } from '../../lib/http/authorizerVerdict.ts';
import { digestKey } from '../../lib/domain/apiKeys.ts';
import { DEFAULT_CREATES_PER_DAY } from '../../lib/domain/keyScope.ts';
import { API_STAGE, matchRoute } from '../../lib/domain/routes.ts';
import { keyItem } from '../../lib/store/controlTableKeys.ts';
import { toProxyEvent } from '@petstore/local-kit/proxyEvent';
import type { BuiltBundle } from './bundles.ts';
import type { Invocation } from './coldRequest.ts';

const KEY = 'bench-key-0123456789abcdef';
const BENCH_KEY_ID = 'bench0000000';

/** The control table's item for the bench's key (its digest), as `npm run keys` writes one. */
export const benchKeyItem = (createdAt: string) =>
  keyItem({ keyId: BENCH_KEY_ID, sha256: digestKey(KEY).toString('hex'), createdAt });

/** The API Gateway proxy event of one request with the bench's key, as the local API builds it. */
export function apiEvent(method: string, target: string, body?: unknown) {
  const url = new URL(target, 'http://bench');
  const match = matchRoute(method, url.pathname);
  if (match.kind !== 'found') throw new Error(target);
  const headers = [
    'Host',
    'bench',
    'Authorization',
    `Bearer ${KEY}`,
    ...(body ? ['Content-Type', 'application/json'] : []),
  ];
  const raw = Buffer.from(body ? JSON.stringify(body) : '');
  return toProxyEvent(
    { method, path: url.pathname, query: url.searchParams, rawHeaders: headers, body: raw, sourceIp: '127.0.0.1' },
    match.route,
    match.pathParameters,
    API_STAGE,
  );
}

/** `event` as API Gateway hands it on behind the key authorizer, with its fresh verdict (the function reads no keys). */
const behindTheAuthorizer = (event: ReturnType<typeof apiEvent>) => ({
  ...event,
  requestContext: {
    ...event.requestContext,
    authorizer: {
      principalId: BENCH_KEY_ID,
      ...verdictContext({
        keyId: BENCH_KEY_ID,
        keysReadAt: Date.now(),
        digest: digestKey(KEY),
        expiresAt: Date.now() + 86_400_000,
        scope: 'write',
        createsPerDay: DEFAULT_CREATES_PER_DAY,
      }),
      integrationLatency: 4,
    },
  },
});

/**
 * What each bundle's first invocation is: the functions' requests with the bench's key behind the
 * key authorizer (lib/http/authorizerVerdict.ts), the floors' GetCommand.
 */
export function coldInvocations(): Record<BuiltBundle['name'], Invocation> {
  const status = (code: number) => (result: unknown) =>
    (result as { statusCode?: unknown } | null)?.statusCode === code;
  const floor: Invocation = {
    event: { id: 4_000_001 },
    expect: (item) => (item as { id?: unknown } | null)?.id === 4_000_001,
    keyReads: 0,
  };
  return {
    floor,
    lambdaFloor: floor,
    listPets: { event: behindTheAuthorizer(apiEvent('GET', '/pets?limit=20')), expect: status(200), keyReads: 0 },
    createPet: {
      event: behindTheAuthorizer(apiEvent('POST', '/pets', { name: 'Cold', categoryId: 1, status: 'available' })),
      expect: status(201),
      keyReads: 0,
    },
    getPet: { event: behindTheAuthorizer(apiEvent('GET', '/pets/4000001')), expect: status(200), keyReads: 0 },
  };
}
