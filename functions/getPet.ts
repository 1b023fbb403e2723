/** GET /v1/pets/{petId} (deprecated; the pipeline adds Deprecation, Sunset and 410 after the sunset). */
import { ApiError } from '../lib/errors.ts';
import { httpHandler } from '../lib/http.ts';
import { jsonResponse } from '../lib/responses.ts';
import { PetIdPath, parseOrThrow } from '../lib/schemas.ts';
import { defaultService, type Service } from '../lib/service.ts';

export const createHandler = (service: Service) =>
  httpHandler('getPet', service, async (event) => {
    const { petId } = parseOrThrow(PetIdPath, event.pathParameters ?? {}, 'path');
    const pet = await service.store.get(petId);
    if (!pet) throw new ApiError('NOT_FOUND', `No pet has the id ${petId}.`);
    return jsonResponse(200, pet);
  });

export const handler = createHandler(defaultService());
