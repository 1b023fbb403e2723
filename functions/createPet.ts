/**
 * POST /v1/pets: validates a NewPet, stores it under a fresh id, answers 201 with its Location.
 * With an Idempotency-Key, a retry answers the pet the first request created (lib/store/idempotency.ts).
 * A read key is refused 403 by the pipeline; each new pet counts against its key's daily create
 * ceiling (lib/store/dailyCreates.ts), a replay does not.
 */
import { API_BASE_PATH } from '../lib/domain/routes.ts';
import { NewPet, parseOrThrow } from '../lib/domain/schemas.ts';
import { idempotencyKeyOf } from '../lib/http/idempotencyKey.ts';
import { jsonBody } from '../lib/http/jsonBody.ts';
import { httpHandler } from '../lib/http/pipeline.ts';
import { jsonResponse } from '../lib/http/responses.ts';
import { defaultDependencies, type Dependencies } from '../lib/service.ts';
import { countCreate } from '../lib/store/dailyCreates.ts';
import { IdempotentCreates } from '../lib/store/idempotency.ts';
import { createPet } from '../lib/store/petWrites.ts';

export const createHandler = (dependencies: Dependencies) =>
  httpHandler(
    'createPet',
    dependencies,
    async (event, { caller, pets, control, note }) => {
      const key = idempotencyKeyOf(event.headers);
      const newPet = parseOrThrow(NewPet, event.body, 'body');
      // Stored on the pet, never answered: which key wrote it (`npm run keys -- pets`).
      const createdBy = caller.keyId;
      const count = () => countCreate(control, caller, dependencies.now().getTime());
      const createOnce = async () => {
        await count();
        return { pet: await createPet(pets, newPet, { newId: dependencies.newId, createdBy }), replayed: false };
      };
      const { pet, replayed } =
        key === undefined
          ? await createOnce()
          : await new IdempotentCreates(control, pets, dependencies.newId, count).create(
              caller.digest,
              key,
              newPet,
              createdBy,
            );
      note(replayed ? { petId: pet.id, replayed } : { petId: pet.id });
      const headers = {
        Location: `${API_BASE_PATH}/pets/${pet.id}`,
        ...(replayed ? { 'Idempotent-Replayed': 'true' } : {}),
      };
      return jsonResponse(201, pet, headers);
    },
    { body: jsonBody() },
  );

export const handler = createHandler(defaultDependencies());
