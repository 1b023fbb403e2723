/**
 * POST /v1/pets: validates a NewPet, stores it under a fresh id, answers 201 with its Location.
 * With an Idempotency-Key, a retry answers the pet the first request created (lib/idempotency.ts).
 */
import { callerOf } from '../lib/auth.ts';
import { httpHandler } from '../lib/http.ts';
import { jsonBody } from '../lib/jsonBody.ts';
import { IdempotentCreates, idempotencyKeyOf } from '../lib/idempotency.ts';
import { jsonResponse } from '../lib/responses.ts';
import { API_BASE_PATH } from '../lib/routes.ts';
import { NewPet, parseOrThrow } from '../lib/schemas.ts';
import { defaultService, type Service } from '../lib/service.ts';

export const createHandler = (service: Service) => {
  const idempotency = new IdempotentCreates(service.control.documents, service.control.tableName, service.store);
  return httpHandler(
    'createPet',
    service,
    async (event) => {
      const key = idempotencyKeyOf(event.headers);
      const newPet = parseOrThrow(NewPet, event.body, 'body');
      const { pet, replayed } =
        key === undefined
          ? { pet: await service.store.create(newPet), replayed: false }
          : await idempotency.create(callerOf(event).digest, key, newPet);
      const headers = { Location: `${API_BASE_PATH}/pets/${pet.id}`, ...(replayed ? { 'Idempotent-Replayed': 'true' } : {}) };
      return jsonResponse(201, pet, headers);
    },
    { body: jsonBody() },
  );
};

export const handler = createHandler(defaultService());
