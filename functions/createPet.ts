/** POST /v1/pets: validates a NewPet, stores it under a fresh id, answers 201 with its Location. */
import { httpHandler } from '../lib/http.ts';
import { jsonBody } from '../lib/jsonBody.ts';
import { jsonResponse } from '../lib/responses.ts';
import { API_BASE_PATH } from '../lib/routes.ts';
import { NewPet, parseOrThrow } from '../lib/schemas.ts';
import { defaultService, type Service } from '../lib/service.ts';

export const createHandler = (service: Service) =>
  httpHandler(
    'createPet',
    service,
    async (event) => {
      const newPet = parseOrThrow(NewPet, event.body, 'body');
      const pet = await service.store.create(newPet);
      return jsonResponse(201, pet, { Location: `${API_BASE_PATH}/pets/${pet.id}` });
    },
    { body: jsonBody() },
  );

export const handler = createHandler(defaultService());
