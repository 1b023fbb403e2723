/** GET /v1/pets: a page of pets, optionally of one status; `Link: rel="next"` while more remain. */
import { ListPetsQuery, parseOrThrow } from '../lib/domain/schemas.ts';
import { httpHandler } from '../lib/http/pipeline.ts';
import { absoluteUrl, jsonResponse, nextPageLink } from '../lib/http/responses.ts';
import { defaultDependencies, type Dependencies } from '../lib/service.ts';
import { cursorCodecFor } from '../lib/store/cursorSecret.ts';
import { listPets } from '../lib/store/petPages.ts';

export const createHandler = (dependencies: Dependencies) => {
  const cursors = cursorCodecFor(dependencies);
  // The secrets are kept across requests (the codec's); each request waits for them until its deadline.
  return httpHandler('listPets', dependencies, async (event, { pets, deadline }) => {
    const query = parseOrThrow(ListPetsQuery, event.queryStringParameters ?? {}, 'query');
    const afterId = query.cursor === undefined ? undefined : await cursors.decode(query.cursor, query.status, deadline);
    const page = await listPets(pets, { limit: query.limit, status: query.status, afterId });
    if (page.lastId === undefined) return jsonResponse(200, page.pets);
    const cursor = await cursors.encode(page.lastId, query.status, deadline);
    return jsonResponse(200, page.pets, { Link: nextPageLink(absoluteUrl(event, '/pets'), query, cursor) });
  });
};

export const handler = createHandler(defaultDependencies());
