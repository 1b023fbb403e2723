/**
 * The typed client for the Pet Store API: openapi-fetch over the types openapi-typescript generates
 * from openapi.json (./schema.ts), so a change of the contract is a type error here. Every operation
 * retries transient failures (./retry.ts); createPet always sends an `Idempotency-Key`, the same on
 * every retry, so one call stores at most one pet. Error answers throw a typed `PetStoreError`.
 */
import createClient, { type Client } from 'openapi-fetch';
import { retryPolicy, withRetries, type Answer, type RetryOptions } from './retry.ts';
import { BASE_PATH, type components, type paths } from './schema.ts';

export type Pet = components['schemas']['Pet'];
export type NewPet = components['schemas']['NewPet'];
export type PetStatus = components['schemas']['PetStatus'];

export interface ClientOptions {
  /** The API's base URL, ending in `/v1` (the stack's `ApiUrl` output, or `http://127.0.0.1:3000/v1` locally). */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>`; left out, every call answers 401; given undefined or empty, refused. */
  apiKey?: string;
  /** Retry rules for every call of this client; each call may override them. */
  retry?: RetryOptions;
  /** Another fetch (for example one that logs); the global fetch by default. */
  fetch?: (input: Request) => Promise<Response>;
}

export interface CallOptions {
  /** This call's retry rules, over the client's. */
  retry?: RetryOptions;
  /** Cancels the call, retries included. */
  signal?: AbortSignal;
}

export interface CreateOptions extends CallOptions {
  /**
   * The create's `Idempotency-Key` (1 to 255 printable ASCII characters). By default a fresh UUID per
   * call. Pass your own to carry one logical create across calls (or processes): the API then answers
   * the pet the first of them stored, for 24 hours.
   */
  idempotencyKey?: string;
}

export interface Created {
  pet: Pet;
  /** The `Location` header: the created pet's path. */
  location: string | null;
  /** The key the create was sent with. */
  idempotencyKey: string;
  /** True when the API answered a pet an earlier request with this key had stored (`Idempotent-Replayed`). */
  replayed: boolean;
}

export interface Page {
  pets: Pet[];
  /** The next page's absolute URL, from `Link: rel="next"`; absent on the last page. */
  next?: string;
}

export interface ListQuery {
  limit?: number;
  status?: PetStatus;
  cursor?: string;
}

/** The `next` target of a Link header, if any, as written. */
export function nextLink(link: string | null): string | undefined {
  return link
    ?.split(',')
    .map((part) => /^\s*<([^>]+)>\s*;\s*rel="?next"?\s*$/.exec(part)?.[1])
    .find(Boolean);
}

/**
 * The API's base address, refused in one line when it is not an absolute http(s) URL: when the
 * client is made, not retried at its first call as if the network had failed.
 */
function baseUrlOf(value: unknown): string {
  const text = typeof value === 'string' ? value.replace(/\/+$/, '') : '';
  if (!/^https?:$/.test(URL.canParse(text) ? new URL(text).protocol : '')) {
    const given = typeof value === 'string' ? JSON.stringify(value) : String(value);
    throw new TypeError(
      `baseUrl must be an http(s) URL such as https://<id>.execute-api.<region>.amazonaws.com/v1, not ${given}`,
    );
  }
  // Without the base path every call would be answered 404, as the smoke check refuses it too.
  const url = new URL(text);
  if (!url.pathname.endsWith(BASE_PATH) || url.search || url.hash)
    throw new TypeError(
      `baseUrl must end in ${BASE_PATH}, the API's base path (the stack's ApiUrl output, or http://127.0.0.1:3000${BASE_PATH} locally), not ${JSON.stringify(value)}`,
    );
  return text;
}

/**
 * The Authorization header for `apiKey`. Left out, the client sends none (every call is answered
 * 401); given but undefined or empty (`apiKey: process.env.KEY` with KEY unset) it is refused now,
 * in one line, not at the first call.
 */
function authorizationOf(options: ClientOptions): Record<string, string> {
  if (!Object.hasOwn(options, 'apiKey')) return {};
  const key: unknown = options.apiKey;
  if (typeof key !== 'string' || key.trim() === '') {
    const given = typeof key === 'string' ? 'empty' : String(key);
    throw new TypeError(
      `apiKey is ${given}: give the API key (an unset environment variable reads as undefined), or leave apiKey out for a client without one, which every call answers 401`,
    );
  }
  return { Authorization: `Bearer ${key}` };
}

type Retried = <T>(
  call: CallOptions | undefined,
  send: (signal: AbortSignal) => Promise<Answer<T>>,
  idempotencyKey?: string,
) => Promise<{ data: T; response: Response }>;

/** listPets' pages: one page, and the page a `next` link names. */
function pages(api: Client<paths>, baseUrl: string, retried: Retried) {
  async function listPage(query: ListQuery, call: CallOptions | undefined): Promise<Page> {
    const { data, response } = await retried(call, (signal) => api.GET('/pets', { params: { query }, signal }));
    const link = nextLink(response.headers.get('link'));
    // RFC 8288: a relative reference is resolved against the request's URL (the API sends absolute ones).
    return link ? { pets: data, next: new URL(link, response.url || `${baseUrl}/`).href } : { pets: data };
  }

  /**
   * The page a `next` link names. Only its query (limit, status, cursor) is taken: the request goes to
   * this client's own `baseUrl`, so the API key is never sent to another address.
   */
  function followNext(next: string, call?: CallOptions): Promise<Page> {
    const url = new URL(next);
    if (!url.pathname.endsWith('/pets')) throw new Error(`not a listPets link: ${next}`);
    const query: ListQuery = Object.fromEntries(url.searchParams);
    if (query.limit !== undefined) query.limit = Number(query.limit);
    return listPage(query, call);
  }

  return { listPage, followNext };
}

export function petStoreClient(options: ClientOptions) {
  const baseUrl = baseUrlOf(options?.baseUrl);
  retryPolicy(options.retry); // refuses bad retry options when the client is made, not at its first call
  const api = createClient<paths>({
    baseUrl,
    headers: authorizationOf(options),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const retried: Retried = (call, send, idempotencyKey) =>
    withRetries(send, { policy: retryPolicy(options.retry, call?.retry), signal: call?.signal, idempotencyKey });
  const { listPage, followNext } = pages(api, baseUrl, retried);

  return {
    /** The underlying openapi-fetch client, for requests the methods below do not cover (it does not retry). */
    api,

    /** One page of pets; `next` is the following page's URL while more remain. */
    listPets: (query: ListQuery = {}, call?: CallOptions): Promise<Page> => listPage(query, call),

    followNext,

    /** Every pet of the query, page after page, following `Link: rel="next"` to the last page. */
    async *allPets(
      query: Omit<ListQuery, 'cursor'> = {},
      call: CallOptions & { maxPages?: number } = {},
    ): AsyncGenerator<Pet> {
      const maxPages = call.maxPages ?? 10_000;
      let page = await listPage(query, call);
      for (let pages = 1; ; pages++) {
        yield* page.pets;
        if (!page.next) return;
        if (pages >= maxPages) throw new Error(`more than ${maxPages} pages`);
        page = await followNext(page.next, call);
      }
    },

    /**
     * Stores a pet. Retry-safe: every attempt carries the same `Idempotency-Key`, so however many
     * attempts reach the API, at most one pet is stored and the answer is that pet.
     */
    async createPet(pet: NewPet, call: CreateOptions = {}): Promise<Created> {
      const idempotencyKey = call.idempotencyKey ?? crypto.randomUUID();
      const { data, response } = await retried(
        call,
        (signal) => api.POST('/pets', { body: pet, params: { header: { 'Idempotency-Key': idempotencyKey } }, signal }),
        idempotencyKey,
      );
      return {
        pet: data,
        location: response.headers.get('location'),
        idempotencyKey,
        replayed: response.headers.get('idempotent-replayed') === 'true',
      };
    },

    /** Deprecated by the API (see `deprecation`); use listPets with `status` instead. */
    async getPet(
      petId: number,
      call?: CallOptions,
    ): Promise<{ pet: Pet; deprecation: { deprecation: string | null; sunset: string | null; link: string | null } }> {
      const { data, response } = await retried(call, (signal) =>
        api.GET('/pets/{petId}', { params: { path: { petId } }, signal }),
      );
      const h = response.headers;
      return {
        pet: data,
        deprecation: { deprecation: h.get('deprecation'), sunset: h.get('sunset'), link: h.get('link') },
      };
    },
  };
}

export type PetStoreClient = ReturnType<typeof petStoreClient>;
