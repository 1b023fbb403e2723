/** GET /v1/pets/{petId} (deprecated; the pipeline adds Deprecation, Sunset and 410 after the sunset). */
import { ApiError } from '../lib/domain/errors.ts';
import { PetIdPath, parseOrThrow } from '../lib/domain/schemas.ts';
import { httpHandler } from '../lib/http/pipeline.ts';
import { jsonResponse } from '../lib/http/responses.ts';
import { defaultDependencies, type Dependencies } from '../lib/service.ts';
import { getPet } from '../lib/store/petReads.ts';

export const createHandler = (dependencies: Dependencies) =>
  httpHandler('getPet', dependencies, async (event, { pets }) => {
    const { petId } = parseOrThrow(PetIdPath, event.pathParameters ?? {}, 'path');
    const pet = await getPet(pets, petId);
    if (!pet) throw new ApiError('NOT_FOUND', `No pet has the id ${petId}.`);
    return jsonResponse(200, pet);
  });

export const handler = createHandler(defaultDependencies());
