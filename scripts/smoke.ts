/**
 * `npm run smoke -- --base <url> --key <key>`: the check to run after a deploy, through the typed
 * client. Creates a smoke pet, reads it back, finds it by paging its status to the end, and checks
 * 401 without a key, 404 for an unknown id, getPet's deprecation headers and the Error shape of a 400.
 * One line per check, then a summary; exits 1 when any check fails.
 */
import { parseArgs } from 'node:util';
import { petStoreClient, PetStoreError, type Pet } from '../client/src/index.ts';
import { isEntryPoint } from '../local/entryPoint.ts';

const USAGE = 'Usage: npm run smoke -- --base <https://…/v1> --key <API key>';
/** Smoke pets stay in the store (the API deletes nothing): their name says what they are. */
export const SMOKE_NAME_PREFIX = 'smoke-test';
/** An id no pet has: the largest the API accepts (ids are about 2^42 today). */
const UNKNOWN_ID = Number.MAX_SAFE_INTEGER;

export interface SmokeResult {
  passed: number;
  failed: number;
}

export async function runSmoke(
  base: string,
  key: string,
  print: (line: string) => void = console.log,
  fetch?: (request: Request) => Promise<Response>,
): Promise<SmokeResult> {
  const client = petStoreClient({ baseUrl: base, apiKey: key, ...(fetch ? { fetch } : {}) });
  const anonymous = petStoreClient({ baseUrl: base, ...(fetch ? { fetch } : {}) });
  const result: SmokeResult = { passed: 0, failed: 0 };
  let created: Pet | undefined;

  const check = async (name: string, run: () => Promise<string>): Promise<void> => {
    try {
      const detail = await run();
      result.passed++;
      print(`ok    ${name}${detail ? `: ${detail}` : ''}`);
    } catch (error) {
      result.failed++;
      print(`FAIL  ${name}: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  const needPet = (): Pet => {
    if (!created) throw new Error('skipped: no pet was created');
    return created;
  };

  await check('createPet answers 201 with the pet and its Location', async () => {
    const name = `${SMOKE_NAME_PREFIX} ${new Date().toISOString()}`;
    const { pet, location } = await client.createPet({ name, categoryId: 1, status: 'pending' });
    expect(pet.name === name && pet.status === 'pending', `unexpected pet ${JSON.stringify(pet)}`);
    expect(location?.endsWith(`/pets/${pet.id}`) === true, `Location is ${location}`);
    created = pet;
    return `id ${pet.id}`;
  });
  await check('getPet reads it back', async () => {
    const { pet } = await client.getPet(needPet().id);
    expect(JSON.stringify(pet) === JSON.stringify(needPet()), `got ${JSON.stringify(pet)}`);
    return '';
  });
  await check('listPets finds it by paging status=pending to the end', async () => {
    const pet = needPet();
    let seen = 0;
    let found = false;
    for await (const listed of client.allPets({ status: 'pending', limit: 100 })) {
      seen++;
      if (listed.id === pet.id) found = true;
    }
    expect(found, `not among ${seen} pending pets`);
    return `among ${seen} pending pets`;
  });
  await check('401 without a key', async () => {
    const error = await errorOf(anonymous.listPets());
    expect(error.status === 401 && error.code === 'UNAUTHORIZED', error.message);
    expect(error.headers.get('www-authenticate')?.startsWith('Bearer') === true, 'no WWW-Authenticate: Bearer');
    return '';
  });
  await check('404 for an unknown id', async () => {
    const error = await errorOf(client.getPet(UNKNOWN_ID));
    expect(error.status === 404 && error.code === 'NOT_FOUND', error.message);
    return '';
  });
  await check('getPet carries Deprecation, Sunset and its successor', async () => {
    const { deprecation } = await client.getPet(needPet().id);
    expect(/^@\d+$/.test(deprecation.deprecation ?? ''), `Deprecation is ${deprecation.deprecation}`);
    expect(!Number.isNaN(Date.parse(deprecation.sunset ?? '')), `Sunset is ${deprecation.sunset}`);
    expect(/rel="successor-version"/.test(deprecation.link ?? ''), `Link is ${deprecation.link}`);
    return `Sunset ${deprecation.sunset}`;
  });
  await check('a 400 has the Error shape', async () => {
    const error = await errorOf(client.listPets({ limit: 0 }));
    const body: Partial<NonNullable<PetStoreError['body']>> = error.body ?? {};
    const keys = Object.keys(body).sort().join(',');
    expect(error.status === 400 && body.status === 400 && error.code === 'VALIDATION_FAILED', error.message);
    expect(keys === 'code,message,status' && typeof body.message === 'string', `body ${JSON.stringify(body)}`);
    return '';
  });

  print(`smoke ${base}: ${result.passed} passed, ${result.failed} failed`);
  return result;
}

function expect(condition: boolean, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

async function errorOf(call: Promise<unknown>): Promise<PetStoreError> {
  try {
    await call;
  } catch (error) {
    if (error instanceof PetStoreError) return error;
    throw error;
  }
  throw new Error('expected an Error answer, got a success');
}

async function main(): Promise<void> {
  let values: { base?: string; key?: string; help?: boolean };
  try {
    ({ values } = parseArgs({ options: { base: { type: 'string' }, key: { type: 'string' }, help: { type: 'boolean', short: 'h' } } }));
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    process.exit(2);
  }
  if (values.help) return console.log(USAGE);
  if (!values.base || !values.key) {
    console.error(USAGE);
    process.exit(2);
  }
  const { failed } = await runSmoke(values.base, values.key);
  process.exitCode = failed === 0 ? 0 : 1;
}

if (isEntryPoint(import.meta.url)) await main();
