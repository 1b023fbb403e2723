/**
 * The one way tests call the local API over HTTP: `fetch`, then the response is checked against
 * openapi.json (test/support/contract.ts) and its JSON body parsed.
 */
import { nextLink } from '../../client/src/index.ts';
import type { Pet } from '../../lib/domain/schemas.ts';
import { assertDocumented, resourcePathOf } from './contract.ts';

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: any;
}

export async function fetchApi(url: string | URL, init: RequestInit = {}): Promise<ApiResponse> {
  const response = await fetch(url, init);
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`${init.method ?? 'GET'} ${url} -> ${response.status}: not JSON: ${text.slice(0, 200)}`);
  }
  const method = init.method ?? 'GET';
  const headers = Object.fromEntries([...response.headers].map(([name, value]) => [name.toLowerCase(), value]));
  assertDocumented(method, resourcePathOf(method, new URL(url).pathname), { status: response.status, headers, body });
  return { status: response.status, headers: response.headers, body };
}

/** A `fetch` for the typed client that checks every response against openapi.json on the way. */
export async function validatingFetch(request: Request): Promise<Response> {
  const response = await fetch(request);
  const text = await response.clone().text();
  const headers = Object.fromEntries([...response.headers].map(([name, value]) => [name.toLowerCase(), value]));
  const { pathname } = new URL(request.url);
  assertDocumented(request.method, resourcePathOf(request.method, pathname), {
    status: response.status,
    headers,
    body: JSON.parse(text),
  });
  return response;
}

/**
 * Every pet of a listing at `url`, following `Link: rel="next"` to the last page, each page read
 * with `get`; a page answered other than 200 ends the walk and is returned as `refused`.
 */
export async function walkPets(
  url: string,
  headers: RequestInit['headers'],
  get: (url: string) => Promise<Response> = (next) => fetch(next, { headers }),
): Promise<{ pets: Pet[]; refused?: Response }> {
  const pets: Pet[] = [];
  for (let next: string | undefined = url; next; ) {
    const res: Response = await get(next);
    if (res.status !== 200) return { pets, refused: res };
    pets.push(...((await res.json()) as Pet[]));
    next = nextLink(res.headers.get('link'));
  }
  return { pets };
}
