/**
 * What a REST API does between matching a method and calling its integration, as the template
 * defines it: the method's Lambda REQUEST authorizer (its identity sources, its function invoked
 * under the API's permission, its answer cached per identity for the TTL, its policy evaluated, its
 * context and usageIdentifierKey kept), then the usage plan of an API key (per-key token bucket and
 * quota). Used by ./accessControl.ts.
 *
 * Not emulated: which API keys exist and which usage plan each is in (`npm run keys` creates them
 * on AWS only): every usageIdentifierKey an authorizer returns counts as a key of the stage's plan.
 */
import type { InvokeOutcome } from './lambdaFunction.ts';

export interface AuthorizerDefinition {
  id: string;
  logicalId: string;
  type: string;
  functionArn: string;
  /** `method.request.header.Authorization`, ... */
  identitySources: string[];
  ttlSeconds: number;
}

export interface UsagePlanDefinition {
  logicalId: string;
  rateLimit?: number | undefined;
  burstLimit?: number | undefined;
  quota?: { limit: number; period: string } | undefined;
}

/** What an Allow leaves for the integration: `requestContext.authorizer`, and the caller's API key. */
export interface Authorization {
  principalId: string;
  context: Record<string, string | number | boolean>;
  usageIdentifierKey?: string | undefined;
}

/** The gateway response a refusal is answered with, and the message of API Gateway's own. */
export interface Refusal {
  type:
    | 'UNAUTHORIZED'
    | 'ACCESS_DENIED'
    | 'AUTHORIZER_FAILURE'
    | 'AUTHORIZER_CONFIGURATION_ERROR'
    | 'INVALID_API_KEY'
    | 'THROTTLED'
    | 'QUOTA_EXCEEDED';
  message: string;
  log?: string;
}

export interface AuthorizerRequest {
  methodArn: string;
  /** The identity source values are read from these (header names in any case). */
  header(name: string): string | undefined;
  query(name: string): string | undefined;
  /** The REQUEST authorizer's event, built only when the authorizer runs. */
  event(): Record<string, unknown>;
}

const DEFAULT_TTL_SECONDS = 300;

export const readAuthorizerTtl = (value: unknown): number =>
  value === undefined || value === null ? DEFAULT_TTL_SECONDS : Number(value);

type Cached = { expires: number; outcome: Authorization | Refusal };

/** One API's authorizers: each answer cached per authorizer and identity for its TTL. */
export class Authorizers {
  readonly #cache = new Map<string, Cached>();

  constructor(
    readonly invoke: (functionArn: string, event: unknown) => Promise<InvokeOutcome>,
    readonly permitted: (authorizer: AuthorizerDefinition) => boolean,
    readonly now: () => number = () => performance.now(),
  ) {}

  async authorize(authorizer: AuthorizerDefinition, request: AuthorizerRequest): Promise<Authorization | Refusal> {
    if (authorizer.type !== 'REQUEST') {
      return configurationError(
        `authorizer ${authorizer.logicalId} is of type ${authorizer.type}, which the runner does not serve`,
      );
    }
    const identity = authorizer.identitySources.map((source) => identityValue(source, request));
    // A missing identity source is a 401 before anything runs.
    if (identity.some((value) => value === undefined || value === ''))
      return { type: 'UNAUTHORIZED', message: 'Unauthorized' };
    const cacheKey = JSON.stringify([authorizer.id, ...identity]);
    const cached = this.#cache.get(cacheKey);
    if (cached && cached.expires > this.now()) return decide(cached.outcome, request.methodArn);
    if (!this.permitted(authorizer))
      return configurationError(`Invalid permissions on Lambda function ${authorizer.functionArn}`);
    const outcome = await this.invoke(authorizer.functionArn, request.event());
    if (outcome.kind === 'error' && outcome.errorMessage === 'Unauthorized')
      return { type: 'UNAUTHORIZED', message: 'Unauthorized' };
    if (outcome.kind !== 'ok') {
      return {
        type: 'AUTHORIZER_FAILURE',
        message: 'Internal server error',
        log: `Authorizer error: ${outcome.errorMessage}`,
      };
    }
    const result = parseResult(outcome.payload);
    // Only a policy is cached; a failure asks again next time.
    if (result.type !== 'AUTHORIZER_CONFIGURATION_ERROR' && authorizer.ttlSeconds > 0) {
      this.#cache.set(cacheKey, { expires: this.now() + authorizer.ttlSeconds * 1000, outcome: result });
    }
    return decide(result, request.methodArn);
  }
}

function identityValue(source: string, request: AuthorizerRequest): string | undefined {
  const [, location, name = ''] = /^method\.request\.(header|querystring)\.(.+)$/.exec(source) ?? [];
  if (location === 'header') return request.header(name);
  if (location === 'querystring') return request.query(name);
  return undefined;
}

const configurationError = (log: string): Refusal => ({
  type: 'AUTHORIZER_CONFIGURATION_ERROR',
  message: 'Internal server error',
  log,
});

interface ParsedPolicy extends Authorization {
  type: 'policy';
  statements: { effect: string; resources: string[] }[];
}

/** The authorizer's answer, or a configuration error when API Gateway could not read it. */
function parseResult(payload: unknown): ParsedPolicy | Refusal {
  if (!isRecord(payload) || typeof payload.principalId !== 'string' || !isRecord(payload.policyDocument)) {
    return configurationError('Invalid authorizer response: principalId or policyDocument missing');
  }
  const statements = payload.policyDocument.Statement;
  if (!Array.isArray(statements) || !statements.every(isRecord))
    return configurationError('Invalid authorizer response: no Statement list');
  const context = payload.context ?? {};
  if (!isRecord(context) || !Object.values(context).every((v) => ['string', 'number', 'boolean'].includes(typeof v))) {
    return configurationError('Invalid authorizer response: context values must be strings, numbers or booleans');
  }
  const key = payload.usageIdentifierKey;
  return {
    type: 'policy',
    principalId: payload.principalId,
    context: context as Authorization['context'],
    ...(typeof key === 'string' ? { usageIdentifierKey: key } : {}),
    statements: statements
      .map((statement) => ({
        effect: String(statement.Effect),
        resources: [statement.Resource].flat().map(String),
        actions: [statement.Action].flat().map(String),
      }))
      .filter((statement) =>
        statement.actions.some((action) => ['execute-api:Invoke', 'execute-api:*', '*'].includes(action)),
      ),
  };
}

/** IAM's evaluation of the (cached) policy for this method: an explicit Deny wins, then an Allow. */
function decide(outcome: ParsedPolicy | Refusal | Authorization, methodArn: string): Authorization | Refusal {
  if (!('statements' in outcome)) return outcome as Authorization | Refusal;
  const matching = outcome.statements.filter((statement) =>
    statement.resources.some((resource) => arnLike(resource, methodArn)),
  );
  if (
    matching.some((statement) => statement.effect === 'Deny') ||
    !matching.some((statement) => statement.effect === 'Allow')
  ) {
    return { type: 'ACCESS_DENIED', message: 'User is not authorized to access this resource' };
  }
  const { principalId, context, usageIdentifierKey } = outcome;
  return { principalId, context, ...(usageIdentifierKey === undefined ? {} : { usageIdentifierKey }) };
}

export const isRefusal = (outcome: Authorization | Refusal): outcome is Refusal => 'type' in outcome;

/** IAM's ArnLike: `*` any run of characters, `?` one. */
export function arnLike(pattern: string, arn: string): boolean {
  const source = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${source}$`, 's').test(arn);
}

// ---------------------------------------------------------------------------------------------
// Usage plans

/** A token bucket: `burst` tokens, refilled at `rate` a second. */
export class TokenBucket {
  #tokens: number;
  #updated: number;
  constructor(
    readonly rate: number,
    readonly burst: number,
    readonly now: () => number = () => performance.now(),
  ) {
    this.#tokens = burst;
    this.#updated = now();
  }

  take(): boolean {
    const now = this.now();
    this.#tokens = Math.min(this.burst, this.#tokens + ((now - this.#updated) / 1000) * this.rate);
    this.#updated = now;
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}

/** The usage plan's limits per API key: its own bucket and its own count for the quota's period. */
export class UsagePlanLimits {
  readonly #buckets = new Map<string, TokenBucket>();
  readonly #counts = new Map<string, { period: string; count: number }>();

  constructor(
    readonly plan: UsagePlanDefinition | undefined,
    readonly clock: { now: () => number; date: () => Date } = { now: () => performance.now(), date: () => new Date() },
  ) {}

  /** Undefined when the key may go on; the refusal otherwise. */
  take(apiKey: string | undefined): Refusal | undefined {
    const { plan } = this;
    if (!apiKey || !plan) return { type: 'INVALID_API_KEY', message: 'Forbidden' };
    if (plan.rateLimit !== undefined || plan.burstLimit !== undefined) {
      let bucket = this.#buckets.get(apiKey);
      if (!bucket) {
        bucket = new TokenBucket(plan.rateLimit ?? Infinity, plan.burstLimit ?? Infinity, this.clock.now);
        this.#buckets.set(apiKey, bucket);
      }
      if (!bucket.take()) return { type: 'THROTTLED', message: 'Too Many Requests' };
    }
    if (plan.quota) {
      const period = periodOf(this.clock.date(), plan.quota.period);
      const counted = this.#counts.get(apiKey);
      const count = counted?.period === period ? counted.count : 0;
      if (count >= plan.quota.limit) return { type: 'QUOTA_EXCEEDED', message: 'Limit Exceeded' };
      this.#counts.set(apiKey, { period, count: count + 1 });
    }
    return undefined;
  }
}

/** The quota period a moment falls in (UTC, no offset): `2026-11-25`, `2026-W48`, `2026-11`. */
function periodOf(date: Date, period: string): string {
  const day = date.toISOString().slice(0, 10);
  if (period === 'MONTH') return day.slice(0, 7);
  if (period === 'WEEK') return `week-${Math.floor((date.getTime() / 86_400_000 + 3) / 7)}`;
  return day;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
