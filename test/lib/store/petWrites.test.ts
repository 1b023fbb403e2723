/**
 * The write path's identity rule: a create knows its own earlier write by its token, never by the
 * pet's body. Ids are forced to collide through the generator, as many instances sharing a
 * millisecond would make them.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { createHandler as createPetHandler } from '../../../functions/createPet.ts';
import { getPet } from '../../../lib/store/petReads.ts';
import { ID_ATTEMPTS, createPet, putPet } from '../../../lib/store/petWrites.ts';
import { apiEvent, call } from '../../support/events.ts';
import { useFreshService } from '../../support/store.ts';

const fresh = useFreshService();

const rex = { name: 'Rex', categoryId: 7, status: 'available' as const };
/** An id generator that answers `ids` in turn, then fresh high ids. */
const idsInTurn = (...ids: number[]) => {
  let next = 9_000_000;
  return () => ids.shift() ?? next++;
};
const rawItem = async (id: number) =>
  (await fresh.service.pets.documents.send(new GetCommand({ TableName: fresh.env.TABLE_NAME, Key: { id } }))).Item;

describe('createPet (store)', () => {
  it('stores two creates of the same body that draw the same id as two pets', async () => {
    const newId = idsInTurn(1001, 1001);
    const first = await createPet(fresh.service.pets, rex, { newId });
    const second = await createPet(fresh.service.pets, rex, { newId });
    expect(first.id).toBe(1001);
    expect(second.id).not.toBe(1001);
    expect(await getPet(fresh.service.pets, second.id)).toEqual({ ...rex, id: second.id });
  });

  it('takes a taken id holding its own token for its own earlier write', async () => {
    await putPet(fresh.service.pets, { ...rex, id: 2002 }, 'token-a');
    expect(await putPet(fresh.service.pets, { ...rex, id: 2002 }, 'token-a')).toBe('stored');
    expect(await putPet(fresh.service.pets, { ...rex, id: 2002 }, 'token-b')).toBe('taken');
    expect(await putPet(fresh.service.pets, { ...rex, name: 'Max', id: 2002 }, 'token-a')).toBe('stored');
    expect(await getPet(fresh.service.pets, 2002)).toEqual({ ...rex, id: 2002 });
  });

  it('stores the token with the pet, and never answers it', async () => {
    const pet = await createPet(fresh.service.pets, rex, { token: 'my-token' });
    expect(await rawItem(pet.id)).toMatchObject({ writeToken: 'my-token' });
    expect(pet).toEqual({ ...rex, id: pet.id });
    expect(await getPet(fresh.service.pets, pet.id)).toEqual(pet);
  });

  it(`gives up after ${ID_ATTEMPTS} taken ids, and not before`, async () => {
    const taken = Array.from({ length: ID_ATTEMPTS }, (_, i) => 3000 + i);
    for (const id of taken) await putPet(fresh.service.pets, { ...rex, id }, `other-${id}`);
    await expect(createPet(fresh.service.pets, rex, { newId: idsInTurn(...taken) })).rejects.toThrow(
      `after ${ID_ATTEMPTS} attempts`,
    );
    const last = await createPet(fresh.service.pets, rex, { newId: idsInTurn(...taken.slice(1), 4000) });
    expect(last.id).toBe(4000);
  });
});

describe('POST /v1/pets with forced id collisions (through the composition root)', () => {
  const post = (handler: ReturnType<typeof createPetHandler>, key?: string) =>
    call(handler, apiEvent('POST', '/pets', { body: rex, headers: key ? { 'Idempotency-Key': key } : {} }));

  it('never merges concurrent identical creates: every 201 is its own pet', async () => {
    const handler = createPetHandler({ ...fresh.service, newId: idsInTurn(...Array.from({ length: 20 }, () => 5005)) });
    const answers = await Promise.all(Array.from({ length: 20 }, () => post(handler)));
    expect(answers.map((res) => res.status)).toEqual(Array.from({ length: 20 }, () => 201));
    const ids = answers.map((res) => res.body.id as number);
    expect(new Set(ids).size).toBe(20);
    for (const id of ids) expect(await getPet(fresh.service.pets, id)).toEqual({ ...rex, id });
  });

  it('moves a keyed create off an id another create took, instead of failing every retry', async () => {
    // The keyless create takes 6006 first; the keyed one claimed 6006 too and must move.
    const handler = createPetHandler({ ...fresh.service, newId: idsInTurn(6006, 6006) });
    const keyless = await post(handler);
    const keyed = await post(handler, 'order-6006');
    expect(keyless).toMatchObject({ status: 201, body: { id: 6006 } });
    expect(keyed.status).toBe(201);
    expect(keyed.body.id).not.toBe(6006);
    const retried = await post(handler, 'order-6006');
    expect(retried).toMatchObject({ status: 201, body: keyed.body });
    expect(retried.headers['idempotent-replayed']).toBe('true');
  });
});
