/**
 * A small typed client for the Pet Store API: openapi-fetch over the types that openapi-typescript
 * generates from openapi.json (client/schema.ts), so a change of the contract is a type error here.
 * Error answers become a typed `PetStoreError`; `allPets` follows `Link: rel="next"` to the end.
 */
import createClient from 'openapi-fetch';
import type { components, paths } from './schema.ts';

export type Pet = components['schemas']['Pet'];
export type NewPet = components['schemas']['NewPet'];
export type PetStatus = components['schemas']['PetStatus'];
export type ErrorBody = components['schemas']['Error'];

/** An Error answer of the API, with its body as the contract types it. */
export class PetStoreError extends Error {
  readonly status: number;
  readonly body: ErrorBody;
  readonly headers: Headers;

  constructor(status: number, body: ErrorBody, headers: Headers) {
    super(`${status} ${body.code}: ${body.message}`);
    this.name = 'PetStoreError';
    this.status = status;
    this.body = body;
    this.headers = headers;
  }
}

export interface ClientOptions {
  /** The API's base URL, ending in `/v1` (e.g. the ApiUrl output of the stack). */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>`; without it every call answers 401. */
  apiKey?: string;
  fetch?: (input: Request) => Promise<Response>;
}

export interface Page {
  pets: Pet[];
  /** The next page's URL, from `Link: rel="next"`; absent on the last page. */
  next?: string;
}

export interface ListQuery {
  limit?: number;
  status?: PetStatus;
  cursor?: string;
}

/** The `next` target of a Link header, if any. */
export function nextLink(link: string | null): string | undefined {
  return link?.split(',').map((part) => /^\s*<([^>]+)>\s*;\s*rel="?next"?\s*$/.exec(part)?.[1]).find(Boolean);
}

export function petStoreClient(options: ClientOptions) {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const api = createClient<paths>({
    baseUrl,
    headers: options.apiKey === undefined ? {} : { Authorization: `Bearer ${options.apiKey}` },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });

  /** The data of a success, or the Error body thrown as a PetStoreError. */
  function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): { data: T; response: Response } {
    if (result.error !== undefined || result.data === undefined) {
      throw new PetStoreError(result.response.status, result.error as ErrorBody, result.response.headers);
    }
    return { data: result.data, response: result.response };
  }

  const listAt = async (pageBase: string, query: ListQuery): Promise<Page> => {
    const { data, response } = unwrap(await api.GET('/pets', { baseUrl: pageBase, params: { query } }));
    const next = nextLink(response.headers.get('link'));
    return next ? { pets: data, next } : { pets: data };
  };

  return {
    /** The underlying openapi-fetch client, for requests the helpers below do not cover. */
    api,
    listPets: (query: ListQuery = {}): Promise<Page> => listAt(baseUrl, query),

    /** Every pet of the query, page after page, following `Link: rel="next"` as the API gives it. */
    async *allPets(query: Omit<ListQuery, 'cursor'> = {}, maxPages = 10_000): AsyncGenerator<Pet> {
      let page = await listAt(baseUrl, query);
      for (let pages = 1; ; pages++) {
        yield* page.pets;
        if (!page.next) return;
        if (pages >= maxPages) throw new Error(`more than ${maxPages} pages`);
        const url = new URL(page.next);
        const pageBase = url.href.slice(0, url.href.indexOf('/pets?'));
        page = await listAt(pageBase, Object.fromEntries(url.searchParams) as ListQuery);
      }
    },

    async createPet(pet: NewPet): Promise<{ pet: Pet; location: string | null }> {
      const { data, response } = unwrap(await api.POST('/pets', { body: pet }));
      return { pet: data, location: response.headers.get('location') };
    },

    /** Deprecated by the API (see `deprecation`); use listPets with `status` instead. */
    async getPet(petId: number): Promise<{ pet: Pet; deprecation: { deprecation: string | null; sunset: string | null; link: string | null } }> {
      const { data, response } = unwrap(await api.GET('/pets/{petId}', { params: { path: { petId } } }));
      const h = response.headers;
      return { pet: data, deprecation: { deprecation: h.get('deprecation'), sunset: h.get('sunset'), link: h.get('link') } };
    },
  };
}

export type PetStoreClient = ReturnType<typeof petStoreClient>;
