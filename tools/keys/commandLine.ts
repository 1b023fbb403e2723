/**
 * `npm run keys` command lines: the usage text, and each command with its options read and checked
 * before anything is asked of AWS. A mistake is a UsageError, answered in one line with exit code 2.
 */
import { parseArgs } from 'node:util';
import { CONTROL_TABLE_OUTPUT, PETS_TABLE_OUTPUT, stackName } from '../../infra/names.ts';
import { API_KEY_FORMAT } from '../../lib/domain/apiKeys.ts';
import {
  DEFAULT_KEY_LIFETIME_MS,
  MAX_KEY_LIFETIME_MS,
  MIN_KEY_LIFETIME_MS,
  ROTATION_OVERLAP_MS,
} from '../../lib/domain/keyLifetime.ts';
import {
  DEFAULT_CREATES_PER_DAY,
  DEFAULT_KEY_SCOPE,
  KEY_SCOPES,
  MAX_CREATES_PER_DAY,
  isKeyScope,
  type KeyScope,
} from '../../lib/domain/keyScope.ts';
import { STAGES, isStage, type Stage } from '../../lib/domain/stages.ts';
import { KEY_REVOCATION_BOUND_MS } from '../../lib/store/controlTableKeys.ts';
import { CURSOR_SECRET_OVERLAP_MS, CURSOR_SECRET_PROPAGATION_MS } from '../../lib/store/cursorSecret.ts';

export class UsageError extends Error {}

const KEY_ID = /^[0-9a-f]{12}$/;
const MAX_DESCRIPTION = 1024;
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** "5 minutes 30 seconds", "1 minute", "45 seconds". */
export function describeDuration(ms: number): string {
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1000);
  const part = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;
  return [minutes ? part(minutes, 'minute') : '', seconds || !minutes ? part(seconds, 'second') : '']
    .filter(Boolean)
    .join(' ');
}

/** A lifetime in whole days when it is one ("90 days"), else in hours ("36 hours"). */
export const describeLifetime = (ms: number): string =>
  ms % DAY_MS === 0
    ? `${ms / DAY_MS} day${ms === DAY_MS ? '' : 's'}`
    : `${Math.round(ms / HOUR_MS)} hour${ms === HOUR_MS ? '' : 's'}`;

/** When a created or revoked key takes effect in every instance: docs/operating.md ("API keys") states the same words. */
export const TAKES_EFFECT = `within ${describeDuration(KEY_REVOCATION_BOUND_MS)}`;

/** `--expires-in`: whole days (`90d`) or hours (`12h`), from MIN_KEY_LIFETIME_MS to MAX_KEY_LIFETIME_MS. */
function parseLifetime(text: string): number {
  const match = /^(\d{1,5})([dh])$/.exec(text.trim());
  const ms = match ? Number(match[1]) * (match[2] === 'd' ? DAY_MS : HOUR_MS) : NaN;
  if (!(ms >= MIN_KEY_LIFETIME_MS && ms <= MAX_KEY_LIFETIME_MS)) {
    throw new UsageError(
      `--expires-in takes whole days or hours from ${describeLifetime(MIN_KEY_LIFETIME_MS)} to ${describeLifetime(MAX_KEY_LIFETIME_MS)} (e.g. 30d, 12h), not "${text}".`,
    );
  }
  return ms;
}

/** `--creates-per-day`: a whole number from 1 to MAX_CREATES_PER_DAY. */
function parseCreatesPerDay(text: string): number {
  const ceiling = /^\d{1,7}$/.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!(ceiling >= 1 && ceiling <= MAX_CREATES_PER_DAY))
    throw new UsageError(`--creates-per-day takes a whole number from 1 to ${MAX_CREATES_PER_DAY}, not "${text}".`);
  return ceiling;
}

export const USAGE = `Usage: npm run keys -- <command> [options]

Manages the Pet Store API keys kept in a stage's control table (partition "apikeys").

Commands:
  create --stage <stage> [--description <text>] [--scope read|write] [--creates-per-day <n>]
         [--expires-in <d|h>] [--out <file>]
                                 Issue a new key; only its SHA-256 digest is stored. It expires
                                 after ${describeLifetime(DEFAULT_KEY_LIFETIME_MS)} unless --expires-in says otherwise (at most ${describeLifetime(MAX_KEY_LIFETIME_MS)}).
                                 The key is shown once: on a terminal, or written to --out.
  list --stage <stage>           Show each key's id, scope, daily creates, creation, age, expiry,
                                 last use and description.
  revoke <keyId> --stage <stage> Delete a key.
  rotate <keyId> --stage <stage> [--scope read|write] [--creates-per-day <n>] [--expires-in <d|h>] [--out <file>]
                                 Issue the key's successor now (the old key's description, scope
                                 and daily creates unless given), and shorten the old key's life to
                                 at most ${describeLifetime(ROTATION_OVERLAP_MS)} from now (never lengthen it).
  rotate-cursor-secret --stage <stage>
                                 Replace the secret that signs page cursors: the new one signs
                                 ${describeDuration(CURSOR_SECRET_PROPAGATION_MS)} later, once every instance has read it;
                                 cursors of the old one keep working ${describeDuration(CURSOR_SECRET_OVERLAP_MS)} more.
  pets <keyId> --stage <stage> [--remove [--yes]]
                                 List the pets the key created (dry run); --remove deletes them once
                                 you type the key id (--yes instead: required without a terminal).

Options:
  --stage <stage>        ${STAGES.join(' or ')} (required)
  --description <text>   What the key is for, for example who holds it (create only).
  --scope read|write     read: the GET operations only; write: every operation (create: default
                         ${DEFAULT_KEY_SCOPE}; rotate: the old key's).
  --creates-per-day <n>  How many pets a write key may create per UTC day, 1 to ${MAX_CREATES_PER_DAY}; past it
                         createPet answers 429 until 00:00 UTC (create: default ${DEFAULT_CREATES_PER_DAY}; rotate: the old key's).
  --expires-in <d|h>     The new key's lifetime in days or hours, e.g. 30d or 12h (create, rotate).
  --out <file>           Write the new key to this new file (mode 0600) instead of the terminal;
                         required when standard output is not a terminal (create, rotate).
  --table <name>         The control table (default: $CONTROL_TABLE_NAME, else the ${CONTROL_TABLE_OUTPUT}
                         output of the stage's stack, ${stackName('staging')} or ${stackName('production')}).
  --pets-table <name>    The pets table (pets only; default: the ${PETS_TABLE_OUTPUT} output of the stage's stack).
  --endpoint <url>       DynamoDB endpoint to use (default: $AWS_ENDPOINT_URL_DYNAMODB, else AWS's).
  -h, --help             Show this help.

AWS credentials come from the usual places (environment, profile, SSO); the region is the one the
CDK CLI deploys to: AWS_REGION, else AWS_DEFAULT_REGION, else the profile's, else us-east-1.
The service caches keys: a created or revoked key takes effect ${TAKES_EFFECT}.
Exit codes: 0 done, 1 failed, 2 bad usage.`;

/**
 * What a new key needs: its lifetime, where it is shown (undefined: standard output), and its scope
 * and daily create ceiling when given (undefined: create's defaults, rotate's old key's).
 */
interface NewKeyOptions {
  lifetimeMs: number;
  out: string | undefined;
  scope: KeyScope | undefined;
  createsPerDay: number | undefined;
}

type Command =
  | { name: 'help' }
  | ({ name: 'create'; stage: Stage; description: string | undefined } & NewKeyOptions)
  | { name: 'list'; stage: Stage }
  | { name: 'revoke'; stage: Stage; keyId: string }
  | ({ name: 'rotate'; stage: Stage; keyId: string } & NewKeyOptions)
  | { name: 'rotate-cursor-secret'; stage: Stage }
  | { name: 'pets'; stage: Stage; keyId: string; remove: boolean; yes: boolean; petsTable: string | undefined };

type CommandName = Exclude<Command['name'], 'help'>;
const COMMANDS: readonly CommandName[] = ['create', 'list', 'revoke', 'rotate', 'rotate-cursor-secret', 'pets'];
const isCommand = (name: string): name is CommandName => (COMMANDS as readonly string[]).includes(name);

export interface Invocation {
  command: Command;
  /** The table given (--table or CONTROL_TABLE_NAME); otherwise the stack's output names it. */
  table?: string;
  endpoint?: string;
}

const OPTIONS = {
  stage: { type: 'string' },
  description: { type: 'string' },
  'expires-in': { type: 'string' },
  out: { type: 'string' },
  scope: { type: 'string' },
  'creates-per-day': { type: 'string' },
  endpoint: { type: 'string' },
  table: { type: 'string' },
  'pets-table': { type: 'string' },
  remove: { type: 'boolean' },
  yes: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The options a command reads besides --stage, --table and --endpoint. */
interface Values {
  description?: string | undefined;
  'expires-in'?: string | undefined;
  out?: string | undefined;
  table?: string | undefined;
  'pets-table'?: string | undefined;
  remove?: boolean | undefined;
  yes?: boolean | undefined;
  scope?: string | undefined;
  'creates-per-day'?: string | undefined;
}

/** The command line as node:util's parseArgs reads it; its refusal as a UsageError. */
function parseOptions(argv: readonly string[]) {
  try {
    return parseArgs({ args: [...argv], allowPositionals: true, strict: true, options: OPTIONS });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

export function parseCommand(argv: readonly string[], env: Record<string, string | undefined>): Invocation {
  const { values, positionals } = parseOptions(argv);
  const [name, ...rest] = positionals;
  if (values.help || name === 'help') return { command: { name: 'help' } };
  if (name === undefined) throw new UsageError(`a command is required: ${COMMANDS.join(', ')}.`);
  if (!isCommand(name)) throw new UsageError(`unknown command "${name}"; the commands are ${COMMANDS.join(', ')}.`);

  if (values.stage === undefined) throw new UsageError(`${name} needs --stage ${STAGES.join('|')}.`);
  if (!isStage(values.stage)) throw new UsageError(`--stage must be ${STAGES.join(' or ')}, not "${values.stage}".`);
  for (const [option, commands] of [
    ['description', ['create']],
    ['expires-in', ['create', 'rotate']],
    ['out', ['create', 'rotate']],
    ['pets-table', ['pets']],
    ['remove', ['pets']],
    ['yes', ['pets']],
    ['scope', ['create', 'rotate']],
    ['creates-per-day', ['create', 'rotate']],
  ] as const) {
    if (values[option] !== undefined && !(commands as readonly string[]).includes(name))
      throw new UsageError(`--${option} is only for ${commands.join(' and ')}.`);
  }

  const endpoint = values.endpoint ?? (env.AWS_ENDPOINT_URL_DYNAMODB || undefined);
  const table = values.table?.trim() || env.CONTROL_TABLE_NAME || undefined;
  if (table !== undefined && !/^[A-Za-z0-9_.-]{3,255}$/.test(table))
    throw new UsageError(`"${table}" is not a DynamoDB table name.`);
  if (endpoint !== undefined && !URL.canParse(endpoint))
    throw new UsageError(`the endpoint "${endpoint}" is not a URL.`);
  const command = commandOf(name, values.stage, rest, values);
  return { command, ...(table === undefined ? {} : { table }), ...(endpoint === undefined ? {} : { endpoint }) };
}

function commandOf(name: CommandName, stage: Stage, rest: string[], values: Values): Command {
  if (name === 'pets') return petsCommand(stage, keyIdArgument(name, rest), values);
  if (name === 'revoke' || name === 'rotate') {
    const keyId = keyIdArgument(name, rest);
    return name === 'revoke' ? { name, stage, keyId } : { name, stage, keyId, ...newKeyOptions(values) };
  }
  if (rest.length > 0) throw new UsageError(`${name} takes no arguments besides options; got "${rest.join(' ')}".`);
  if (name === 'create') {
    const description = values.description?.trim() || undefined;
    if (description !== undefined && description.length > MAX_DESCRIPTION)
      throw new UsageError(`--description must be at most ${MAX_DESCRIPTION} characters.`);
    return { name, stage, description, ...newKeyOptions(values) };
  }
  return { name, stage };
}

function newKeyOptions(values: Values): NewKeyOptions {
  const out = values.out?.trim();
  if (values.out !== undefined && !out) throw new UsageError('--out needs a file name.');
  const lifetimeMs = values['expires-in'] === undefined ? DEFAULT_KEY_LIFETIME_MS : parseLifetime(values['expires-in']);
  const scope = values.scope?.trim();
  if (scope !== undefined && !isKeyScope(scope))
    throw new UsageError(`--scope must be ${KEY_SCOPES.join(' or ')}, not "${values.scope}".`);
  const createsPerDay =
    values['creates-per-day'] === undefined ? undefined : parseCreatesPerDay(values['creates-per-day']);
  // A read key creates nothing: a ceiling given with it says the operator meant something else.
  if (scope === 'read' && createsPerDay !== undefined)
    throw new UsageError('--creates-per-day is for write keys; a read key creates nothing.');
  return { lifetimeMs, out: out || undefined, scope, createsPerDay };
}

/** `pets`: the pets table is its own option (--table names the control table, which it never reads). */
function petsCommand(stage: Stage, keyId: string, values: Values): Command {
  if (values.table !== undefined)
    throw new UsageError('pets reads the pets table: name it with --pets-table, not --table.');
  const petsTable = values['pets-table']?.trim() || undefined;
  if (values['pets-table'] !== undefined && !petsTable) throw new UsageError('--pets-table needs a table name.');
  if (values.yes && !values.remove)
    throw new UsageError('--yes confirms --remove; without --remove nothing is removed.');
  return { name: 'pets', stage, keyId, remove: values.remove === true, yes: values.yes === true, petsTable };
}

/** The one key id `revoke`, `rotate` and `pets` take; never echoes a whole key given instead. */
function keyIdArgument(name: 'revoke' | 'rotate' | 'pets', rest: string[]): string {
  const [keyId, ...extra] = rest;
  if (keyId === undefined) throw new UsageError(`${name} needs the id of the key, as create and list show it.`);
  if (extra.length > 0) throw new UsageError(`${name} takes one key id, not ${rest.length}.`);
  if (!KEY_ID.test(keyId)) {
    const isKey = API_KEY_FORMAT.test(keyId);
    const hint = isKey ? ' Give only the id (the 12 characters after "psk_"), never the key.' : '';
    throw new UsageError(`"${isKey ? 'psk_…' : keyId}" is not a key id (12 lowercase hex characters).${hint}`);
  }
  return keyId;
}
