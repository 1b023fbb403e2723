/** GET /v1/pets: a page of pets, optionally of one status; `Link: rel="next"` while more remain. */
import { cursorCodecFor } from '../lib/cursorSecret.ts';
import { httpHandler } from '../lib/http.ts';
import { nextPageLink } from '../lib/pagination.ts';
import { absoluteUrl, jsonResponse } from '../lib/responses.ts';
import { ListPetsQuery, parseOrThrow } from '../lib/schemas.ts';
import { defaultService, type Service } from '../lib/service.ts';

export const createHandler = (service: Service) => {
  const cursors = cursorCodecFor(service);
  return httpHandler('listPets', service, async (event) => {
    const query = parseOrThrow(ListPetsQuery, event.queryStringParameters ?? {}, 'query');
    const afterId = query.cursor === undefined ? undefined : await cursors.decode(query.cursor, query.status);
    const page = await service.store.list({ limit: query.limit, status: query.status, afterId });
    if (page.lastId === undefined) return jsonResponse(200, page.pets);
    const cursor = await cursors.encode(page.lastId, query.status);
    return jsonResponse(200, page.pets, { Link: nextPageLink(absoluteUrl(event, '/pets'), query, cursor) });
  });
};

export const handler = createHandler(defaultService());
