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
 * Runs `tasks` under the stage's throttle with `share` of it (a fraction, so the paced traffic
 * leaves room for what else the scenario sends): a burst at once, then the rest at its rate.
 */
export async function paced<T>(api: DeployedApi, tasks: readonly (() => Promise<T>)[], share = 0.8): Promise<T[]> {
  const { burst, perSecond } = stageThrottle(api);
  const first = Math.max(1, Math.floor(burst * share));
  const batch = Math.max(1, Math.floor((perSecond * share) / 4));
  const running: Promise<T>[] = tasks.slice(0, first).map((task) => task());
  for (let at = first; at < tasks.length; at += batch) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    running.push(...tasks.slice(at, at + batch).map((task) => task()));
  }
  return Promise.all(running);
}
