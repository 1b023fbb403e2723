/**
 * The documented variables of `npm start`, `npm run dev` and `npm run invoke`
 * (docs/local-development.md), each read once and refused in one line with its remedy before any
 * store starts: a value that would otherwise start something else, hang, or end in a stack trace.
 */
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { SCOPED_KEY } from '../lib/domain/apiKeys.ts';
import { isBearerToken } from '../lib/http/auth.ts';
import { CORS_ORIGINS_VARIABLE, parseOrigins } from '../lib/http/cors.ts';
import { statusIndexShardsOf, type Environment } from '../lib/service.ts';
import { LocalSetupError } from '@petstore/local-kit/setupError';

/** A yes-or-no variable: 1/true, 0/false or unset (no); anything else refused, saying what each means. */
function flagOf(given: Environment, name: string, yes: string, no: string): boolean {
  const value = given[name];
  if (value === undefined || value === '0' || value === 'false') return false;
  if (value === '1' || value === 'true') return true;
  throw new LocalSetupError(`${name} takes 1 or true (${yes}) or 0 or false (${no}), not "${value}".`);
}

/** `PETSTORE_IN_MEMORY`: 1/true keeps nothing, 0/false (or unset) persists under the data folder. */
export const inMemoryOf = (given: Environment): boolean =>
  flagOf(given, 'PETSTORE_IN_MEMORY', 'keep nothing', 'keep the data in PETSTORE_DATA_DIR');

/** `PETSTORE_KEEP_DAMAGED_STORE`: 1/true serves what a store damaged since its last clean stop still holds. */
export const keepDamagedOf = (given: Environment): boolean =>
  flagOf(
    given,
    'PETSTORE_KEEP_DAMAGED_STORE',
    'serve what a damaged store still holds',
    'refuse to start on a damaged store',
  );

/** DynamoDB's rule for a table name: 3 to 255 of letters, digits, `_`, `-` and `.`. */
const TABLE_NAME = /^[A-Za-z0-9_.-]{3,255}$/;

/** Refuses every documented variable's value that the start cannot use; the data folder is `makeDataDir`'s. */
export function checkSettings(given: Environment): void {
  inMemoryOf(given);
  keepDamagedOf(given);
  for (const name of ['TABLE_NAME', 'CONTROL_TABLE_NAME'] as const) {
    const value = given[name];
    if (value !== undefined && !TABLE_NAME.test(value)) {
      throw new LocalSetupError(
        `${name} must be a DynamoDB table name (3 to 255 letters, digits, _ - .), not "${value}"; unset it for the default.`,
      );
    }
  }
  const endpoint = given.DYNAMODB_ENDPOINT;
  if (endpoint !== undefined && !/^https?:$/.test(URL.canParse(endpoint) ? new URL(endpoint).protocol : '')) {
    throw new LocalSetupError(
      `DYNAMODB_ENDPOINT must be an http(s) URL such as http://127.0.0.1:8000, not "${endpoint}"; unset it to use the embedded store.`,
    );
  }
  checkApiKeys(given.PETSTORE_API_KEYS);
  for (const origin of parseOrigins(given[CORS_ORIGINS_VARIABLE])) {
    if (!isOrigin(origin)) {
      throw new LocalSetupError(
        `CORS_ALLOWED_ORIGINS takes comma-separated origins such as https://app.example.com (no path), not "${origin}".`,
      );
    }
  }
  try {
    statusIndexShardsOf(given);
  } catch (error) {
    throw new LocalSetupError(`${(error as Error).message} Unset it for the default.`);
  }
}

/**
 * PETSTORE_API_KEYS: comma-separated keys, each optionally `read:` or `write:` first, each one a
 * `Bearer` header can carry; a key with a space (or another character outside RFC 6750's b64token)
 * would be accepted here and then match no request. The key itself is not echoed.
 */
function checkApiKeys(keys: string | undefined): void {
  if (keys === undefined) return;
  const given = keys
    .split(',')
    .map((key) => key.trim())
    .filter(Boolean);
  if (given.length === 0)
    throw new LocalSetupError(
      'PETSTORE_API_KEYS holds no key: give comma-separated keys, or unset it to have one generated.',
    );
  const unusable = given.findIndex((entry) => !isBearerToken(SCOPED_KEY.exec(entry)?.[2] ?? entry));
  if (unusable >= 0)
    throw new LocalSetupError(
      `PETSTORE_API_KEYS key ${unusable + 1} of ${given.length} cannot be sent as "Authorization: Bearer <key>" (it has a space or another character outside A-Z a-z 0-9 - . _ ~ + / and a trailing =): give keys of those characters, comma-separated, read:<key> for a read key.`,
    );
}

/** `scheme://host[:port]` and nothing more, as a browser sends it in `Origin`. */
function isOrigin(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return /^https?:$/.test(url.protocol) && url.origin === value;
}

/**
 * The data folder, made unless it exists, and written to once to prove it can be. Made one level at
 * a time: Node's recursive mkdir never returns on a path under /proc.
 */
export function makeDataDir(dataDir: string): void {
  const refuse = (why: string) =>
    new LocalSetupError(
      `The data folder ${dataDir} cannot be ${why}: point PETSTORE_DATA_DIR at a folder you can write, or set PETSTORE_IN_MEMORY=1 to keep nothing.`,
    );
  const missing: string[] = [];
  for (let folder = dataDir; !existsSync(folder); folder = dirname(folder)) missing.unshift(folder);
  for (const folder of missing) {
    try {
      mkdirSync(folder);
    } catch (error) {
      throw refuse(`made (${codeOf(error)})`);
    }
  }
  if (!statSync(dataDir).isDirectory()) throw refuse('made (a file is in the way)');
  // A write, not access(): for root, access() says yes where the write is refused.
  const probe = join(dataDir, `.write-check-${process.pid}`);
  try {
    writeFileSync(probe, '');
    rmSync(probe);
  } catch (error) {
    throw refuse(`written (${codeOf(error)})`);
  }
}

const codeOf = (error: unknown) => (error as NodeJS.ErrnoException).code ?? String(error);
