/**
 * How the rehearsal's scenarios send real requests to the stage: the product's requests (its paths
 * and bodies, told by the script that starts the rehearsal), each with a key, paced under the
 * stage's own throttle (its burst at once, then its rate), since that throttle runs on real time.
 */
import type { DeployedApi } from '../deployedApi.ts';

/** One request of the product's API. */
export interface RehearsalRequest {
  readonly method: string;
  /** From the stage's base URL, e.g. `/pets`. */
  readonly path: string;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

/** What the product tells the rehearsal: its operations' requests and how a key is issued. */
export interface RehearsalProduct {
  /**
   * A request per operation (by the function name `functionMatches` takes, e.g. `listPets`); `n`
   * varies it, `created` holds the ids the write operation's answers gave so far (for reads of them).
   */
  readonly operations: Readonly<Record<string, (n: number, created: readonly string[]) => RehearsalRequest>>;
  /** The operation that writes an item per request (its alarms: the consumed write capacity). */
  readonly writeOperation: string;
  /** The id of the item a write operation's answer (its JSON body) created. */
  createdId(body: unknown): string | undefined;
  /** A request the API answers 404 (a missing item). */
  notFound(n: number): RehearsalRequest;
  /** How a request carries a key (e.g. `Authorization: Bearer <key>`). */
  authorization(key: string): Record<string, string>;
  /** A key-shaped value no key matches (a mistyped key). */
  mistypedKey(n: number): string;
  /** Issues a key in the running stage, as an operator would; `manyCreates` for one that may create all day. */
  issueKey(api: DeployedApi, options: { stage: string; manyCreates?: boolean }): Promise<string>;
}

export interface Answer {
  readonly status: number;
  readonly body: unknown;
}

/** Sends one request; the answer's status once its body is read. */
export async function send(
  api: DeployedApi,
  request: RehearsalRequest,
  headers: Record<string, string>,
): Promise<Answer> {
  const response = await fetch(`${api.url}${request.path}`, {
    method: request.method,
    headers: {
      ...headers,
      ...request.headers,
      ...(request.body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
  });
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: response.status, body };
}

/** The stage's default method throttle (its `/*` `*` MethodSettings), unlimited when it has none. */
export function stageThrottle(api: DeployedApi): { burst: number; perSecond: number } {
  const stage = Object.values(api.stack.template.Resources).find(
    (resource) => resource.Type === 'AWS::ApiGateway::Stage',
  );
  const settings = (stage?.Properties?.MethodSettings ?? []) as Record<string, unknown>[];
  const all = settings.find((setting) => setting.HttpMethod === '*' && setting.ResourcePath === '/*');
  return {
    burst: Number(all?.ThrottlingBurstLimit ?? Number.POSITIVE_INFINITY),
    perSecond: Number(all?.ThrottlingRateLimit ?? Number.POSITIVE_INFINITY),
  };
}

/**
 * A token bucket on real time, as API Gateway's throttles are: `take` waits for a token. The
 * rehearsal's traffic takes one from the stage's bucket (and the main key's from its plan's) at a
 * share of their limits, so that a healthy minute is never throttled however fast the simulated
 * minutes pass.
 */
export class TokenBucket {
  #tokens: number;
  #at = performance.now();
  #queue: Promise<void> = Promise.resolve();

  constructor(
    readonly perSecond: number,
    readonly burst: number,
  ) {
    this.#tokens = burst;
  }

  take(): Promise<void> {
    const turn = this.#queue.then(async () => {
      for (;;) {
        const now = performance.now();
        this.#tokens = Math.min(this.burst, this.#tokens + ((now - this.#at) / 1000) * this.perSecond);
        this.#at = now;
        if (this.#tokens >= 1) {
          this.#tokens -= 1;
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, ((1 - this.#tokens) / this.perSecond) * 1000));
      }
    });
    this.#queue = turn;
    return turn;
  }
}

/** A bucket at `share` of a throttle (unlimited stays unlimited). */
export const bucketOf = ({ burst, perSecond }: { burst: number; perSecond: number }, share = 0.9): TokenBucket =>
  new TokenBucket(
    Number.isFinite(perSecond) ? perSecond * share : 1e9,
    Number.isFinite(burst) ? Math.max(1, Math.floor(burst * share)) : 1e9,
  );

/** The usage plans' own throttle (the tightest), what each key may send. */
export function planThrottle(api: DeployedApi): { burst: number; perSecond: number } {
  const plans = Object.values(api.stack.template.Resources)
    .filter((resource) => resource.Type === 'AWS::ApiGateway::UsagePlan')
    .map((resource) => (resource.Properties?.Throttle ?? {}) as { BurstLimit?: unknown; RateLimit?: unknown });
  return {
    burst: Math.min(...plans.map(({ BurstLimit }) => Number(BurstLimit ?? Number.POSITIVE_INFINITY))),
    perSecond: Math.min(...plans.map(({ RateLimit }) => Number(RateLimit ?? Number.POSITIVE_INFINITY))),
  };
}
