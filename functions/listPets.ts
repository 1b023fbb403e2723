/** GET /v1/pets: a page of pets, optionally of one status; `Link: rel="next"` while more remain. */
import { ListPetsQuery, parseOrThrow } from '../lib/domain/schemas.ts';
import { httpHandler } from '../lib/http/pipeline.ts';
import { absoluteUrl, jsonResponse, nextPageLink } from '../lib/http/responses.ts';
import { defaultService, type Service } from '../lib/service.ts';
import { cursorCodecFor } from '../lib/store/cursorSecret.ts';
import { listPets } from '../lib/store/petPages.ts';

export const createHandler = (service: Service) => {
  const cursors = cursorCodecFor(service);
  return httpHandler('listPets', service, async (event) => {
    const query = parseOrThrow(ListPetsQuery, event.queryStringParameters ?? {}, 'query');
    const afterId = query.cursor === undefined ? undefined : await cursors.decode(query.cursor, query.status);
    const page = await listPets(service.pets, { limit: query.limit, status: query.status, afterId });
    if (page.lastId === undefined) return jsonResponse(200, page.pets);
    const cursor = await cursors.encode(page.lastId, query.status);
    return jsonResponse(200, page.pets, { Link: nextPageLink(absoluteUrl(event, '/pets'), query, cursor) });
  });
};

export const handler = createHandler(defaultService());
