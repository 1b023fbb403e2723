/**
 * What an API key may do, declared once: its scope (which methods it may call) and its daily create
 * ceiling (how many pets it may create per UTC day). `npm run keys` writes both on the key's item
 * (lib/store/controlTableKeys.ts); the key authorizer allows only its scope's methods in its policy
 * and hands both on in its verdict (lib/http/authorizer.ts); the functions check the scope again
 * (lib/http/auth.ts) and count each create against the ceiling (lib/store/dailyCreates.ts).
 * docs/operating.md ("Key scopes and daily create ceilings") tells the operator's side.
 */
import { ApiError } from './errors.ts';

/** `read`: the GET operations only; `write`: every operation. */
export const KEY_SCOPES = ['read', 'write'] as const;
export type KeyScope = (typeof KEY_SCOPES)[number];

export const isKeyScope = (value: unknown): value is KeyScope => (KEY_SCOPES as readonly unknown[]).includes(value);

/**
 * The scope of a key issued without `--scope`, of a key item from before scopes, and of a key given
 * in configuration (PETSTORE_API_KEYS) without a `read:` prefix: every such key could write before.
 */
export const DEFAULT_KEY_SCOPE: KeyScope = 'write';

/** The methods each scope may call (`*`: all); the authorizer's policy and the functions' check read it. */
export const SCOPE_METHODS: Readonly<Record<KeyScope, readonly string[]>> = { read: ['GET'], write: ['*'] };

export const scopeAllows = (scope: KeyScope, method: string): boolean =>
  SCOPE_METHODS[scope].some((allowed) => allowed === '*' || allowed === method.toUpperCase());

/** What a read key is told when it calls a write operation: by the function, and by API Gateway's ACCESS_DENIED. */
export const SCOPE_REFUSED_MESSAGE = 'This API key is a read key: it may call only the GET operations.';

export const scopeRefused = (): ApiError => new ApiError('FORBIDDEN', SCOPE_REFUSED_MESSAGE);

/**
 * How many pets a key issued without `--creates-per-day` may create per UTC day, and a key item
 * from before ceilings too: about one every 90 seconds all day, far above what a store's staff
 * enters, far below the 432,000 a day the usage plan alone would let one key write.
 */
export const DEFAULT_CREATES_PER_DAY = 1_000;
/** The highest ceiling `--creates-per-day` takes. */
export const MAX_CREATES_PER_DAY = 1_000_000;

export const isCreatesPerDay = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 1 && value <= MAX_CREATES_PER_DAY;

const DAY_MS = 24 * 60 * 60_000;

/** The UTC day of `nowMs`, `YYYY-MM-DD`: the period a key's creates are counted in. */
export const utcDayOf = (nowMs: number): string => new Date(nowMs).toISOString().slice(0, 10);

/** The next 00:00 UTC after `nowMs` (epoch ms): when a key's count starts again from zero. */
export const nextUtcMidnight = (nowMs: number): number => (Math.floor(nowMs / DAY_MS) + 1) * DAY_MS;

/** The 429 of a key that has created its `ceiling` pets today, told to retry at the next 00:00 UTC. */
export const dailyCreatesUsedUp = (ceiling: number, nowMs: number): ApiError =>
  new ApiError(
    'TOO_MANY_REQUESTS',
    `This API key has created its ${ceiling} pets for today (UTC); it may create more from 00:00 UTC.`,
    { 'Retry-After': String(Math.ceil((nextUtcMidnight(nowMs) - nowMs) / 1000)) },
  );
