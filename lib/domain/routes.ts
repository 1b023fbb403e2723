/**
 * The one list of routes: the facts the code runs on. The CDK stack builds its API methods,
 * functions and grants from it, and the local API routes with it, so the two cannot drift. What
 * the documentation says of each route is apart, in routeDocs.ts, so that no bundle carries it.
 */
export const API_BASE_PATH = '/v1';
export const API_STAGE_NAME = 'v1';
/** Where the API is served, as the proxy events the local API builds carry it. */
export const API_STAGE = { basePath: API_BASE_PATH, stageName: API_STAGE_NAME } as const;

export type OperationName = 'listPets' | 'createPet' | 'getPet';
export type HttpMethod = 'GET' | 'POST';

/** What each function may do to the table; the stack grants exactly this and nothing more. */
export type TableAccess = 'dynamodb:GetItem' | 'dynamodb:PutItem' | 'dynamodb:Query' | 'dynamodb:Scan';

export interface Deprecation {
  /** When the operation became deprecated (the spec gives no date: version 1.0.0 shipped it deprecated). */
  readonly since: string;
  /** When it stops answering (410 from then on). */
  readonly sunset: string;
  /** The replacement, below the base path. */
  readonly successor: string;
}

export interface Route {
  readonly operation: OperationName;
  readonly method: HttpMethod;
  /** Path below the base path, in API Gateway's `{param}` form. */
  readonly path: string;
  /** Handler module, relative to the repository root; it exports `handler`. */
  readonly entry: string;
  readonly tableAccess: readonly TableAccess[];
  /** Whether the operation reads `tableAccess` on the status index as well as on the table. */
  readonly usesStatusIndex: boolean;
  /** Whether the operation signs and checks page cursors, and so reads the cursor secret. */
  readonly usesCursorSecret: boolean;
  /** Whether the operation keeps idempotency records (`Idempotency-Key`) in the control table. */
  readonly usesIdempotencyRecords: boolean;
  /** Whether the operation counts its key's creates of the day in the control table (lib/store/dailyCreates.ts). */
  readonly usesDailyCreateCounts: boolean;
  readonly deprecated?: Deprecation;
}

export const routes: readonly Route[] = [
  {
    operation: 'listPets',
    method: 'GET',
    path: '/pets',
    entry: 'functions/listPets.ts',
    tableAccess: ['dynamodb:Query', 'dynamodb:Scan'],
    usesStatusIndex: true,
    usesCursorSecret: true,
    usesIdempotencyRecords: false,
    usesDailyCreateCounts: false,
  },
  {
    operation: 'createPet',
    method: 'POST',
    path: '/pets',
    entry: 'functions/createPet.ts',
    // GetItem: a put whose answer was lost is read back on retry (lib/store/petWrites.ts).
    tableAccess: ['dynamodb:PutItem', 'dynamodb:GetItem'],
    usesStatusIndex: false,
    usesCursorSecret: false,
    usesIdempotencyRecords: true,
    usesDailyCreateCounts: true,
  },
  {
    operation: 'getPet',
    method: 'GET',
    path: '/pets/{petId}',
    entry: 'functions/getPet.ts',
    tableAccess: ['dynamodb:GetItem'],
    usesStatusIndex: false,
    usesCursorSecret: false,
    usesIdempotencyRecords: false,
    usesDailyCreateCounts: false,
    deprecated: { since: '2026-01-01T00:00:00Z', sunset: '2030-12-05T00:00:00Z', successor: '/pets' },
  },
];

/** The 404 message for a path no route has, from the deployed API and the local API alike: fixed, echoing nothing sent. */
export const NOT_FOUND_MESSAGE = 'No resource exists at this path.';

/**
 * The 405 message for a route resource (`path` below the base path, in `{param}` form): the
 * deployed API's mock renders `method` from `$context.httpMethod`, the local API passes the request's.
 */
export const methodNotAllowedMessage = (method: string, path: string, allow: readonly HttpMethod[]): string =>
  `The method ${method} is not allowed on ${API_BASE_PATH}${path}; allowed: ${allow.join(', ')}.`;

/** The distinct resource paths, each with the methods it allows (for 405 and `Allow`). */
export function resourcePaths(list: readonly Route[] = routes): Map<string, HttpMethod[]> {
  const paths = new Map<string, HttpMethod[]>();
  for (const route of list) paths.set(route.path, [...(paths.get(route.path) ?? []), route.method]);
  return paths;
}

export type RouteMatch =
  | { kind: 'found'; route: Route; pathParameters: Record<string, string> }
  | { kind: 'methodNotAllowed'; allow: HttpMethod[] }
  | { kind: 'notFound' };

/** Matches a path below the base path the way API Gateway does: literal segments first, then `{param}`. */
export function matchRoute(method: string, path: string, list: readonly Route[] = routes): RouteMatch {
  const candidates = list
    .map((route) => ({ route, pathParameters: matchPath(route.path, path) }))
    .filter((c): c is { route: Route; pathParameters: Record<string, string> } => c.pathParameters !== undefined);
  if (candidates.length === 0) return { kind: 'notFound' };
  const found = candidates.find((c) => c.route.method === method);
  if (found) return { kind: 'found', ...found };
  return { kind: 'methodNotAllowed', allow: candidates.map((c) => c.route.method) };
}

function matchPath(template: string, path: string): Record<string, string> | undefined {
  const want = template.split('/');
  const got = path.split('/');
  if (want.length !== got.length) return undefined;
  const params: Record<string, string> = {};
  for (const [i, segment] of want.entries()) {
    const actual = got[i] ?? '';
    const param = /^\{(\w+)\}$/.exec(segment)?.[1];
    if (param) {
      if (actual === '') return undefined;
      params[param] = decodePathSegment(actual);
    } else if (segment !== actual) {
      return undefined;
    }
  }
  return params;
}

/** A malformed escape (`%`, `%zz`, an overlong or cut UTF-8 sequence) stays as sent, for validation to refuse. */
function decodePathSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
