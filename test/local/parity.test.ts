/**
 * One behaviour everywhere: one corpus of requests, written once, sent in the same order to the
 * local API (`npm start`) and to both synthesized stages run as deployed (`npm run start:deployed`),
 * the answers compared field by field after each side's ids, cursors, hosts and request ids are
 * replaced by placeholders. Every difference a user could meet is either gone or listed in
 * ALLOWED_DIFFERENCES with its reason; an allowed difference that no longer occurs fails too, so
 * the list stays true.
 */
import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalApi } from '../../local/server.ts';
import { MAX_BODY_BYTES } from '../../lib/http/bodyLimits.ts';
import { startTestApi } from '../support/localApi.ts';
import { startStage, type RunningStage } from '../support/deployedStage.ts';

interface ParityRequest {
  name: string;
  method: string;
  /** The path after the host, `/v1` included, sent as written (no normalisation by the client). */
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Sent without the side's API key. */
  anonymous?: boolean;
}

const json = { 'Content-Type': 'application/json' };
const rex = JSON.stringify({ name: 'Rex', categoryId: 1, status: 'available' });

/** The corpus: every operation's happy path, every documented 4xx, unknown paths and methods, slashes, case, encodings. */
const CORPUS: ParityRequest[] = [
  // Happy paths, in an order that creates what the later requests read.
  { name: 'createPet', method: 'POST', path: '/v1/pets', headers: json, body: rex },
  {
    name: 'createPet without status',
    method: 'POST',
    path: '/v1/pets',
    headers: json,
    body: JSON.stringify({ name: 'Tom', categoryId: 2 }),
  },
  {
    name: 'createPet pending',
    method: 'POST',
    path: '/v1/pets',
    headers: json,
    body: JSON.stringify({ name: 'Kit', categoryId: 2, status: 'pending' }),
  },
  {
    name: 'createPet with a key',
    method: 'POST',
    path: '/v1/pets',
    headers: { ...json, 'Idempotency-Key': 'parity-1' },
    body: rex,
  },
  {
    name: 'createPet replayed',
    method: 'POST',
    path: '/v1/pets',
    headers: { ...json, 'Idempotency-Key': 'parity-1' },
    body: rex,
  },
  {
    name: 'createPet key reused for another body',
    method: 'POST',
    path: '/v1/pets',
    headers: { ...json, 'Idempotency-Key': 'parity-1' },
    body: JSON.stringify({ name: 'Other', categoryId: 1 }),
  },
  { name: 'listPets', method: 'GET', path: '/v1/pets' },
  { name: 'listPets available, limit 1 (a next link)', method: 'GET', path: '/v1/pets?status=available&limit=1' },
  { name: 'listPets pending', method: 'GET', path: '/v1/pets?status=pending' },
  { name: 'listPets limit 100', method: 'GET', path: '/v1/pets?limit=100' },
  { name: 'getPet', method: 'GET', path: '/v1/pets/{id0}' },
  { name: 'getPet unknown id', method: 'GET', path: '/v1/pets/12345' },
  // Authentication.
  { name: 'no Authorization', method: 'GET', path: '/v1/pets', anonymous: true },
  {
    name: 'unknown key',
    method: 'GET',
    path: '/v1/pets',
    anonymous: true,
    headers: { Authorization: 'Bearer psk_000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
  },
  {
    name: 'Basic scheme',
    method: 'GET',
    path: '/v1/pets',
    anonymous: true,
    headers: { Authorization: 'Basic dXNlcjpwYXNz' },
  },
  {
    name: 'unknown key on getPet',
    method: 'GET',
    path: '/v1/pets/{id0}',
    anonymous: true,
    headers: { Authorization: 'Bearer psk_000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
  },
  { name: 'no Authorization on an unknown path', method: 'GET', path: '/v1/nope', anonymous: true },
  // Spellings of the side's key ({key}): the scheme in any case, runs of spaces, blanks HTTP strips; not a tab.
  ...[
    ['the scheme in capitals', 'BEARER {key}'],
    ['the scheme in mixed case', 'bEaReR {key}'],
    ['spaces after the scheme', 'Bearer   {key}'],
    ['a space after the key', 'Bearer {key} '],
    ['a tab after the scheme', 'Bearer\t{key}'],
  ].map(([name, authorization]) => ({
    name: `key spelt: ${name}`,
    method: 'GET',
    path: '/v1/pets?status=sold',
    anonymous: true,
    headers: { Authorization: authorization! },
  })),
  // Query parameters.
  { name: 'limit 0', method: 'GET', path: '/v1/pets?limit=0' },
  { name: 'limit 101', method: 'GET', path: '/v1/pets?limit=101' },
  { name: 'limit abc', method: 'GET', path: '/v1/pets?limit=abc' },
  { name: 'limit 1.5', method: 'GET', path: '/v1/pets?limit=1.5' },
  { name: 'limit repeated', method: 'GET', path: '/v1/pets?status=available&limit=1&limit=2' },
  { name: 'status bogus', method: 'GET', path: '/v1/pets?status=bogus' },
  { name: 'status in capitals', method: 'GET', path: '/v1/pets?status=AVAILABLE' },
  { name: 'cursor garbage', method: 'GET', path: '/v1/pets?cursor=garbage' },
  { name: 'unknown query parameter', method: 'GET', path: '/v1/pets?colour=red' },
  // Path parameters.
  { name: 'petId abc', method: 'GET', path: '/v1/pets/abc' },
  { name: 'petId 0', method: 'GET', path: '/v1/pets/0' },
  { name: 'petId -1', method: 'GET', path: '/v1/pets/-1' },
  { name: 'petId 2^63', method: 'GET', path: '/v1/pets/9223372036854775808' },
  { name: 'petId 2^63 - 1', method: 'GET', path: '/v1/pets/9223372036854775807' },
  { name: 'petId -2^63', method: 'GET', path: '/v1/pets/-9223372036854775808' },
  { name: 'petId -259', method: 'GET', path: '/v1/pets/-259' },
  { name: 'petId 01', method: 'GET', path: '/v1/pets/01' },
  { name: 'petId with an encoded slash', method: 'GET', path: '/v1/pets/1%2F2' },
  // Bodies.
  { name: 'invalid JSON', method: 'POST', path: '/v1/pets', headers: json, body: '{"name":' },
  { name: 'a JSON array', method: 'POST', path: '/v1/pets', headers: json, body: '[]' },
  { name: 'empty body', method: 'POST', path: '/v1/pets', headers: json, body: '' },
  { name: 'no name', method: 'POST', path: '/v1/pets', headers: json, body: JSON.stringify({ categoryId: 1 }) },
  {
    name: 'name of 257 characters',
    method: 'POST',
    path: '/v1/pets',
    headers: json,
    body: JSON.stringify({ name: 'x'.repeat(257), categoryId: 1 }),
  },
  {
    name: 'categoryId a string',
    method: 'POST',
    path: '/v1/pets',
    headers: json,
    body: JSON.stringify({ name: 'Rex', categoryId: '1' }),
  },
  {
    name: 'status bogus in the body',
    method: 'POST',
    path: '/v1/pets',
    headers: json,
    body: JSON.stringify({ name: 'Rex', categoryId: 1, status: 'lost' }),
  },
  {
    name: 'an id in the body',
    method: 'POST',
    path: '/v1/pets',
    headers: json,
    body: JSON.stringify({ id: 7, name: 'Rex', categoryId: 1 }),
  },
  { name: 'text/plain', method: 'POST', path: '/v1/pets', headers: { 'Content-Type': 'text/plain' }, body: rex },
  { name: 'no Content-Type', method: 'POST', path: '/v1/pets', body: rex },
  {
    name: 'Content-Encoding gzip',
    method: 'POST',
    path: '/v1/pets',
    headers: { ...json, 'Content-Encoding': 'gzip' },
    body: Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
  },
  {
    name: 'invalid UTF-8 in a name',
    method: 'POST',
    path: '/v1/pets',
    headers: json,
    body: Buffer.concat([Buffer.from('{"name":"R'), Buffer.from([0xff]), Buffer.from('x","categoryId":1}')]),
  },
  {
    name: 'a body over the limit',
    method: 'POST',
    path: '/v1/pets',
    headers: json,
    body: JSON.stringify({ name: 'Rex', categoryId: 1, pad: 'x'.repeat(MAX_BODY_BYTES) }),
  },
  { name: 'a body on a GET', method: 'GET', path: '/v1/pets', headers: json, body: '{}' },
  // Routing: unknown paths and methods, slashes, case.
  { name: 'unknown path', method: 'GET', path: '/v1/nope' },
  { name: 'path below a pet', method: 'GET', path: '/v1/pets/1/extra' },
  { name: 'the base path', method: 'GET', path: '/v1' },
  { name: 'another version', method: 'GET', path: '/v2/pets' },
  { name: 'DELETE on /pets', method: 'DELETE', path: '/v1/pets' },
  { name: 'PUT on a pet', method: 'PUT', path: '/v1/pets/{id0}', headers: json, body: rex },
  { name: 'PATCH on a pet', method: 'PATCH', path: '/v1/pets/{id0}', headers: json, body: rex },
  { name: 'POST on a pet', method: 'POST', path: '/v1/pets/{id0}', headers: json, body: rex },
  { name: 'an unknown method', method: 'BREW', path: '/v1/pets' },
  { name: 'upper-case path', method: 'GET', path: '/V1/PETS' },
  { name: 'trailing slash', method: 'GET', path: '/v1/pets/' },
  { name: 'doubled slash', method: 'GET', path: '/v1//pets' },
  { name: 'trailing doubled slash', method: 'GET', path: '/v1/pets//' },
  { name: 'trailing slash after a pet', method: 'GET', path: '/v1/pets/{id0}/' },
  { name: 'encoded path', method: 'GET', path: '/v1/%70ets' },
];

/** Answer fields compared: the status, these headers, X-Request-Id's presence, and the body. */
const COMPARED_HEADERS = [
  'content-type',
  'allow',
  'location',
  'link',
  'deprecation',
  'sunset',
  'idempotent-replayed',
  'retry-after',
  'www-authenticate',
  'accept-encoding',
  'cache-control',
  'x-content-type-options',
];

/**
 * Differences a user may meet, each with its reason: `side` is the stage that differs from the local
 * API (or 'both'), `field` the answer field, `case` the corpus entry.
 */
const GATEWAY_RESPONSE_HAS_NO_REQUEST_ID =
  'API Gateway answers it with a gateway response, whose headers may map only request parameters and static values ' +
  '("x-amazon-apigateway-gateway-responses.responseParameters"), not $context.requestId: it carries API Gateway\'s ' +
  'own x-amzn-RequestId (the same id) instead of X-Request-Id. Its body is the Error shape with the same code and message.';
const ALLOWED_DIFFERENCES: { case: string; field: string; side: 'staging' | 'production' | 'both'; reason: string }[] =
  [
    // A path outside the stage's /v1 reaches no method of the API (MISSING_AUTHENTICATION_TOKEN gateway response).
    { case: 'another version', field: 'x-request-id', side: 'both', reason: GATEWAY_RESPONSE_HAS_NO_REQUEST_ID },
    { case: 'upper-case path', field: 'x-request-id', side: 'both', reason: GATEWAY_RESPONSE_HAS_NO_REQUEST_ID },
  ];

interface Answer {
  status: number;
  headers: Record<string, string | undefined>;
  requestId: boolean;
  body: string;
}

interface Side {
  name: 'local' | 'staging' | 'production';
  base: URL;
  key: string;
}

function send(side: Side, entry: ParityRequest, ids: number[]): Promise<Answer> {
  const path = entry.path.replace(/\{id(\d)\}/g, (_, index: string) => String(ids[Number(index)] ?? 0));
  const headers = Object.fromEntries(
    Object.entries(entry.headers ?? {}).map(([name, value]) => [name, value.replace('{key}', side.key)]),
  );
  if (!entry.anonymous) headers.Authorization = `Bearer ${side.key}`;
  const body = entry.body === undefined ? undefined : Buffer.from(entry.body);
  if (body) headers['Content-Length'] = String(body.length);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      { host: side.base.hostname, port: side.base.port, method: entry.method, path, headers },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          const picked = Object.fromEntries(
            COMPARED_HEADERS.map((name) => [name, answer.headers[name] as string | undefined]),
          );
          resolve({
            status: answer.statusCode ?? 0,
            headers: picked,
            requestId: typeof answer.headers['x-request-id'] === 'string',
            body: Buffer.concat(chunks).toString('utf8'),
          });
        });
      },
    );
    outgoing.on('error', reject);
    // A safety timeout: fails the request when no answer comes.
    outgoing.setTimeout(30_000, () => outgoing.destroy(new Error(`${side.name}: ${entry.name}: no answer in 30 s`)));
    outgoing.end(body);
  });
}

/**
 * `send`, retried as a careful client retries a 429 (after its Retry-After): staging's usage plan
 * allows 20 requests a second with a burst of 40, fewer than the corpus sends back to back. A 429
 * reaches no function, so a resend changes nothing stored.
 */
async function sendPaced(side: Side, entry: ParityRequest, ids: number[]): Promise<Answer> {
  for (let attempt = 1; ; attempt++) {
    const answer = await send(side, entry, ids);
    if (answer.status !== 429 || attempt === 5) return answer;
    // Retry-After is the subject: the stage's throttle refills by its own wall clock, which no test clock moves.
    await sleep(Number(answer.headers['retry-after'] ?? 1) * 1000);
  }
}

/** An answer with the side's own values (ids, cursors, host, request ids) replaced by placeholders. */
function normalise(answer: Answer, side: Side, ids: number[]): Record<string, string> {
  const placeholders = (text: string) => {
    let out = text.split(side.base.origin).join('<origin>');
    out = out.replace(/cursor=[^&>"\s]+/g, 'cursor=<cursor>').replace(/"requestId":"[^"]*"/g, '"requestId":"<id>"');
    for (const [index, id] of ids.entries()) out = out.split(String(id)).join(`<id${index}>`);
    return out;
  };
  const fields: Record<string, string> = {
    status: String(answer.status),
    'x-request-id': answer.requestId ? 'present' : 'absent',
  };
  for (const [name, value] of Object.entries(answer.headers))
    if (value !== undefined) fields[name] = placeholders(value);
  fields.body = unordered(answer.body, placeholders);
  return fields;
}

/**
 * A JSON array body with its items sorted: a listing without a status filter comes in the order of
 * a Scan, which follows the hash of each id, and each side's ids differ. (The listings in the corpus
 * that page hold every pet of their status, or filter by one, whose order is the ids'.)
 */
function unordered(body: string, placeholders: (text: string) => string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return placeholders(body);
  }
  if (!Array.isArray(parsed)) return placeholders(body);
  return `[${parsed
    .map((item) => placeholders(JSON.stringify(item)))
    .sort()
    .join(',')}]`;
}

/** Runs the corpus in order against one side; the ids it created, in order, stand in for `{idN}`. */
async function runCorpus(side: Side): Promise<Map<string, Record<string, string>>> {
  const ids: number[] = [];
  const answers = new Map<string, Record<string, string>>();
  for (const entry of CORPUS) {
    const answer = await sendPaced(side, entry, ids);
    if (answer.status === 201) ids.push((JSON.parse(answer.body) as { id: number }).id);
    answers.set(entry.name, normalise(answer, side, ids));
  }
  return answers;
}

function differences(
  local: Map<string, Record<string, string>>,
  stage: Map<string, Record<string, string>>,
): { case: string; field: string; local?: string; stage?: string }[] {
  const found = [];
  for (const entry of CORPUS) {
    const ours = local.get(entry.name)!;
    const theirs = stage.get(entry.name)!;
    for (const field of new Set([...Object.keys(ours), ...Object.keys(theirs)])) {
      if (ours[field] !== theirs[field])
        found.push({ case: entry.name, field, local: ours[field], stage: theirs[field] });
    }
  }
  return found;
}

const KEY = 'parity-local-key-0123456789';
let local: LocalApi | undefined;
const stages: RunningStage[] = [];
const localAnswers = new Map<string, Record<string, string>>();

beforeAll(async () => {
  local = await startTestApi(KEY);
  for (const [name, answer] of await runCorpus({ name: 'local', base: new URL(local.url), key: KEY }))
    localAnswers.set(name, answer);
}, 60_000);
afterAll(async () => {
  await local?.close();
  for (const stage of stages) await stage.close();
});

describe('the local API and the stages run as deployed answer the corpus alike', () => {
  it('has a corpus whose names are unique, and answers for every entry', () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(55);
    expect(new Set(CORPUS.map((entry) => entry.name)).size).toBe(CORPUS.length);
    expect(localAnswers.size).toBe(CORPUS.length);
    // The happy paths happened: without them the comparison of later entries proves little.
    expect(localAnswers.get('createPet')!.status).toBe('201');
    expect(localAnswers.get('getPet')!.status).toBe('200');
    // The spec's petId is an int64: one that names no pet is 404, only what is not an int64 is 400.
    const petIds = [...localAnswers].filter(([name]) => name.startsWith('petId '));
    expect(petIds.map(([name, answer]) => [name.slice('petId '.length), answer.status])).toEqual([
      ['abc', '400'],
      ['0', '404'],
      ['-1', '404'],
      ['2^63', '400'],
      ['2^63 - 1', '404'],
      ['-2^63', '404'],
      ['-259', '404'],
      ['01', '400'],
      ['with an encoded slash', '400'],
    ]);
    // The key's spellings: accepted but for the tab (lib/http/auth.ts), on every side alike.
    const spelt = [...localAnswers].filter(([name]) => name.startsWith('key spelt: '));
    expect(spelt.map(([name, answer]) => [name.slice('key spelt: '.length), answer.status])).toEqual([
      ['the scheme in capitals', '200'],
      ['the scheme in mixed case', '200'],
      ['spaces after the scheme', '200'],
      ['a space after the key', '200'],
      ['a tab after the scheme', '401'],
    ]);
  });

  it.each(['staging', 'production'] as const)(
    '%s: no difference beyond the listed ones',
    async (stageName) => {
      const stage = await startStage(stageName);
      stages.push(stage);
      const stageAnswers = await runCorpus({ name: stageName, base: new URL(stage.api.url), key: stage.key });
      const allowed = ALLOWED_DIFFERENCES.filter(
        (difference) => difference.side === stageName || difference.side === 'both',
      );
      const found = differences(localAnswers, stageAnswers);
      const unexplained = found.filter(
        (difference) => !allowed.some((entry) => entry.case === difference.case && entry.field === difference.field),
      );
      const stale = allowed.filter(
        (entry) => !found.some((difference) => difference.case === entry.case && difference.field === entry.field),
      );
      expect(unexplained).toEqual([]);
      expect(stale, 'listed as allowed differences but answered alike: remove them from ALLOWED_DIFFERENCES').toEqual(
        [],
      );
    },
    180_000,
  );
});
