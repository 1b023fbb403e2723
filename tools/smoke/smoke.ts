/**
 * `PETSTORE_API_KEY=… npm run smoke -- --base <url ending in /v1> [--read-only]`: the check to run after
 * a deploy, through the typed client (which retries transient answers within `--retry-budget`). The key
 * comes from the environment only, so that it lands neither in shell history nor in `ps`: `--key` is
 * refused in one line.
 *
 * - `--read-only` creates nothing: 401 without a key, 404 for an unknown id, the Error shape of a 400,
 *   paging over the pets already stored, an absolute `Link: rel="next"`, and getPet's deprecation
 *   headers on a listed pet (skipped, and said so, when the store holds too few pets).
 * - without it, it first creates a pet named `smoke-test <date>` (status `pending`; the API deletes
 *   nothing, so it stays), prints its id, reads it back and finds it by paging its status to the end.
 *
 * One line per check (./run.ts), then a summary; exit 1 when any check fails, 2 for bad arguments (one line).
 */
import { parseArgs } from 'node:util';
import { BASE_PATH, nextLink, petStoreClient, PetStoreError, type Pet } from '../../client/src/index.ts';
import { SMOKE_KEY_VARIABLE, SmokeRun, Skipped, expect, need, type SmokeResult } from './run.ts';

export { SMOKE_KEY_VARIABLE, type SmokeResult };
const USAGE = `Usage: ${SMOKE_KEY_VARIABLE}=<API key> npm run smoke -- --base <https://…${BASE_PATH}> [--read-only] [--retry-budget <ms>]`;
/** Smoke pets stay in the store (the API deletes nothing): their name says what they are. */
const SMOKE_NAME_PREFIX = 'smoke-test';
/** An id no pet has: the largest the API accepts (ids are about 2^42 today). */
const UNKNOWN_ID = Number.MAX_SAFE_INTEGER;
/** How long each request may keep retrying transient answers (503, 429, no answer). */
const SMOKE_RETRY_BUDGET_MS = 5_000;
/** Read-only paging: pages this small show paging on a store of a few pets; this many of them at most. */
const PAGE_LIMIT = 2;
const MAX_PAGES = 5;

export interface SmokeOptions {
  readOnly?: boolean;
  retryBudgetMs?: number;
  print?: (line: string) => void;
  fetch?: (request: Request) => Promise<Response>;
}

export async function runSmoke(base: string, key: string, options: SmokeOptions = {}): Promise<SmokeResult> {
  const print = options.print ?? console.log;
  const run = new SmokeRun({
    base,
    key,
    retryBudgetMs: options.retryBudgetMs ?? SMOKE_RETRY_BUDGET_MS,
    print,
    fetch: options.fetch ?? ((request: Request) => fetch(request)),
  });
  const created = options.readOnly ? undefined : await creatingChecks(run);
  await readChecks(run, created);
  const { result } = run;
  const skipped = result.skipped
    ? `, ${result.skipped} skipped${run.keyRefused ? ' (the API refused the key)' : ''}`
    : '';
  print(
    `smoke ${base}${options.readOnly ? ' (read-only)' : ''}: ${result.passed} passed, ${result.failed} failed${skipped}`,
  );
  return result;
}

/** Creates a smoke pet, reads it back, finds it by its status; the pet, when it was created. */
async function creatingChecks(run: SmokeRun): Promise<Pet | undefined> {
  const { client, result } = run;
  let created: Pet | undefined;
  await run.check('createPet answers 201 with the pet and its Location', async () => {
    const name = `${SMOKE_NAME_PREFIX} ${new Date().toISOString()}`;
    const { pet, location } = await client.createPet({ name, categoryId: 1, status: 'pending' });
    created = pet;
    result.createdId = pet.id;
    expect(pet.name === name && pet.status === 'pending', `unexpected pet ${JSON.stringify(pet)}`);
    expect(location?.endsWith(`/pets/${pet.id}`) === true, `Location is ${location}`);
    return `created pet ${pet.id} ("${name}"; it stays: the API deletes nothing)`;
  });
  await run.check('getPet reads it back', async () => {
    const pet = need(created, 'no pet was created');
    const { pet: read } = await client.getPet(pet.id);
    expect(JSON.stringify(read) === JSON.stringify(pet), `got ${JSON.stringify(read)}`);
    return '';
  });
  await run.check('listPets finds it by paging status=pending to the end', async () => {
    const pet = need(created, 'no pet was created');
    let seen = 0;
    let found = false;
    for await (const each of client.allPets({ status: 'pending', limit: 100 })) {
      seen++;
      if (each.id === pet.id) found = true;
    }
    expect(found, `not among ${seen} pending pets`);
    return `among ${seen} pending pets`;
  });
  return created;
}

/** The checks that create nothing; `created` (a creating run's pet) is the one getPet's deprecation is read on. */
async function readChecks(run: SmokeRun, created: Pet | undefined): Promise<void> {
  const { client, anonymous } = run;
  await run.check(
    '401 without a key',
    async () => {
      const error = await errorOf(anonymous.listPets({ limit: 1 }));
      expect(error.status === 401 && error.code === 'UNAUTHORIZED', error.message);
      // A deployed stage delivers the challenge as x-amzn-Remapped-WWW-Authenticate (API Gateway renames it).
      const challenge = error.headers.get('www-authenticate') ?? error.headers.get('x-amzn-remapped-www-authenticate');
      expect(
        challenge?.startsWith('Bearer') === true,
        'no WWW-Authenticate (or x-amzn-Remapped-WWW-Authenticate): Bearer',
      );
      return '';
    },
    { withoutKey: true },
  );
  await run.check('404 for an unknown id', async () => {
    const error = await errorOf(client.getPet(UNKNOWN_ID));
    expect(error.status === 404 && error.code === 'NOT_FOUND', error.message);
    return '';
  });
  await run.check('a 400 has the Error shape', async () => {
    const error = await errorOf(client.listPets({ limit: 0 }));
    const body = need(error.body, `no Error body: ${error.message}`);
    expect(error.status === 400 && body.status === 400 && body.code === 'VALIDATION_FAILED', error.message);
    const keys = Object.keys(body).sort().join(',');
    expect(keys === 'code,message,status' && typeof body.message === 'string', `body ${JSON.stringify(body)}`);
    return '';
  });
  const listing = await pagingCheck(run);
  await linkCheck(run);
  await run.check('getPet carries Deprecation, Sunset and its successor', async () => {
    const pet = created ?? listing.first;
    if (!pet && !listing.done) throw new Error('not run: listing the stored pets failed');
    if (!pet) throw new Skipped('the store holds no pets to read');
    const { deprecation } = await client.getPet(pet.id);
    expect(/^@\d+$/.test(deprecation.deprecation ?? ''), `Deprecation is ${deprecation.deprecation}`);
    expect(!Number.isNaN(Date.parse(deprecation.sunset ?? '')), `Sunset is ${deprecation.sunset}`);
    expect(/rel="successor-version"/.test(deprecation.link ?? ''), `Link is ${deprecation.link}`);
    return `pet ${pet.id}, Sunset ${deprecation.sunset}`;
  });
}

/** Pages through the stored pets; the first pet listed, and whether the listing went through. */
async function pagingCheck(run: SmokeRun): Promise<{ first: Pet | undefined; done: boolean }> {
  const { client } = run;
  const listing: { first: Pet | undefined; done: boolean } = { first: undefined, done: false };
  await run.check(`listPets pages through the stored pets (pages of ${PAGE_LIMIT}, at most ${MAX_PAGES})`, async () => {
    const seen = new Set<number>();
    let page = await client.listPets({ limit: PAGE_LIMIT });
    let pages = 1;
    for (;;) {
      expect(page.pets.length <= PAGE_LIMIT, `a page of ${page.pets.length} pets for limit ${PAGE_LIMIT}`);
      for (const pet of page.pets) {
        expect(!seen.has(pet.id), `pet ${pet.id} listed twice`);
        seen.add(pet.id);
      }
      listing.first ??= page.pets[0];
      if (!page.next || pages === MAX_PAGES) break;
      expect(
        page.pets.length === PAGE_LIMIT,
        `a page before the last holds ${page.pets.length} pets, not ${PAGE_LIMIT}`,
      );
      page = await client.followNext(page.next);
      pages++;
    }
    listing.done = true;
    return `${seen.size} pets over ${pages} page${pages === 1 ? '' : 's'}${page.next ? ', more remain' : ', to the last page'}`;
  });
  return listing;
}

async function linkCheck(run: SmokeRun): Promise<void> {
  await run.check('Link rel="next" is an absolute URL of listPets', async () => {
    // The header as the API sent it (the client resolves a relative link itself), through the
    // retrying client: a fetch that keeps what each answer's Link said.
    const links: (string | null)[] = [];
    const watching = petStoreClient({
      ...run.shared,
      apiKey: run.options.key,
      fetch: async (request) => {
        const response = await run.shared.fetch(request);
        links.push(response.headers.get('link'));
        return response;
      },
    });
    await watching.listPets({ limit: 1 });
    const link = links.at(-1);
    if (!link) throw new Skipped('the store holds fewer than 2 pets, so there is no next page');
    const next = nextLink(link);
    const url = URL.canParse(next ?? '') ? new URL(next as string) : undefined;
    expect(url !== undefined && /^https?:$/.test(url.protocol), `not absolute: Link: ${link}`);
    expect(
      url.pathname.endsWith(`${BASE_PATH}/pets`) && url.searchParams.has('cursor'),
      `not a listPets page: ${next}`,
    );
    return url.origin + url.pathname;
  });
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

/** Why `base` cannot be a stage's base URL, or undefined when it can. */
function baseProblem(base: string): string | undefined {
  const url = URL.canParse(base) ? new URL(base) : undefined;
  if (!url || !/^https?:$/.test(url.protocol)) return `--base must be an http(s) URL, not ${base}`;
  if (url.search || url.hash || !url.pathname.replace(/\/$/, '').endsWith(BASE_PATH)) {
    return `--base must end in ${BASE_PATH}, the stage's base URL (the stack's ApiUrl output, e.g. https://<id>.execute-api.<region>.amazonaws.com${BASE_PATH}), not ${base}`;
  }
  return undefined;
}

/** A mistake on the command line: one line, exit code 2. */
function usageError(message: string): never {
  console.error(`smoke: ${message} (npm run smoke -- --help for usage)`);
  process.exit(2);
}

export async function runSmokeCommand(argv: string[]): Promise<void> {
  let values: { base?: string; key?: string; 'read-only'?: boolean; 'retry-budget'?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        base: { type: 'string' },
        // Read only to refuse it by name: a key on the command line lands in shell history and ps.
        key: { type: 'string' },
        'read-only': { type: 'boolean' },
        'retry-budget': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    usageError((error as Error).message);
  }
  if (values.help) return console.log(USAGE);
  if (values.key !== undefined)
    usageError(
      `--key is refused: a key on the command line lands in shell history and ps; set ${SMOKE_KEY_VARIABLE} instead`,
    );
  if (!values.base) usageError('--base is required');
  const key = process.env[SMOKE_KEY_VARIABLE];
  if (!key) usageError(`no API key: set ${SMOKE_KEY_VARIABLE}`);
  const problem = baseProblem(values.base);
  if (problem) usageError(problem);
  const budget = values['retry-budget'] === undefined ? SMOKE_RETRY_BUDGET_MS : Number(values['retry-budget']);
  if (!Number.isInteger(budget) || budget <= 0)
    usageError(`--retry-budget takes a whole number of milliseconds, not ${values['retry-budget']}`);
  const { failed } = await runSmoke(values.base, key, {
    readOnly: values['read-only'] === true,
    retryBudgetMs: budget,
  });
  process.exitCode = failed === 0 ? 0 : 1;
}
