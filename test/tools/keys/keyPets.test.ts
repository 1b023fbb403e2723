/**
 * `npm run keys -- pets <keyId>` (tools/keys/keyPets.ts): one key's pets, created through createPet's
 * handler as the service creates them, listed (a dry run), and removed only on `--remove` with a
 * confirmation; another key's pets, and pets created before creators were recorded, are never touched.
 */
import {
  DeleteCommand,
  PutCommand,
  ScanCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import type { DescribeStacksCommand, DescribeStacksCommandOutput } from '@aws-sdk/client-cloudformation';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createHandler as createPetHandler } from '../../../functions/createPet.ts';
import { dependenciesFromEnvironment, type Environment } from '../../../lib/service.ts';
import { createDocumentClient } from '../../../lib/store/dynamo.ts';
import {
  EXIT_FAILED,
  EXIT_OK,
  EXIT_USAGE,
  USAGE,
  type KeysIo,
  type StackOutputsReader,
} from '../../../tools/keys/keys.ts';
import { apiEvent, call } from '../../support/events.ts';
import { runKeysCollected } from '../../support/keys.ts';
import { freshEnvironment, useEmbeddedStore } from '../../support/store.ts';

const FIRST = 'a1b2c3d4e5f6';
const SECOND = '0f9e8d7c6b5a';
const keyOf = (keyId: string) => `psk_${keyId}_${'K'.repeat(43)}`;

const endpoint = useEmbeddedStore();
let env: Environment;
let documents: DynamoDBDocumentClient;
/** Every command sent, by class name; and a fault to inject into one kind. */
let sent: string[];
let fault: ((command: { constructor: { name: string }; input: unknown }) => Promise<void> | undefined) | undefined;
let client: DynamoDBDocumentClient;

beforeAll(() => {
  documents = createDocumentClient({ endpoint: endpoint() });
  client = {
    send: async (command: { constructor: { name: string }; input: unknown }) => {
      sent.push(command.constructor.name);
      await fault?.(command);
      return documents.send(command as never);
    },
  } as unknown as DynamoDBDocumentClient;
});
afterAll(() => documents.destroy());

beforeEach(async () => {
  env = await freshEnvironment(endpoint(), { PETSTORE_API_KEYS: `${keyOf(FIRST)},${keyOf(SECOND)}` });
  sent = [];
  fault = undefined;
});

/** Creates a pet as `keyId`'s holder does, through createPet's handler; its id. */
async function createAs(keyId: string, name: string, status?: string): Promise<number> {
  const create = createPetHandler(dependenciesFromEnvironment(env));
  const body = { name, categoryId: 1, ...(status ? { status } : {}) };
  const res = await call(
    create,
    apiEvent('POST', '/pets', { body, headers: { Authorization: `Bearer ${keyOf(keyId)}` } }),
  );
  expect(res.status).toBe(201);
  return res.body.id;
}

const storedIds = async () =>
  ((await documents.send(new ScanCommand({ TableName: env.TABLE_NAME }))).Items ?? [])
    .map((item) => Number(item.id))
    .sort();

const pets = (argv: readonly string[], io: Partial<KeysIo> = {}) =>
  runKeysCollected(['pets', ...argv, '--stage', 'staging', '--pets-table', env.TABLE_NAME!], { client, ...io });

/** Three pets of the first key, two of the second, and one from before creators were recorded. */
async function twoKeysPets() {
  const first = [
    await createAs(FIRST, 'Rex', 'available'),
    await createAs(FIRST, 'Tom'),
    await createAs(FIRST, 'Max', 'sold'),
  ];
  const second = [await createAs(SECOND, 'Bella', 'available'), await createAs(SECOND, 'Luna')];
  const legacy = 7;
  await documents.send(new PutCommand({ TableName: env.TABLE_NAME, Item: { id: legacy, name: 'Old', categoryId: 1 } }));
  return { first, second, legacy };
}

describe('keys pets', () => {
  it('lists the pets one key created (id, status, name, count) and removes nothing without --remove', async () => {
    const { first } = await twoKeysPets();
    const run = await pets([FIRST]);
    expect(run).toMatchObject({ code: EXIT_OK, err: '' });
    const [ids, tom] = [[...first].sort(), first[1]];
    expect(run.out.split('\n')).toEqual([
      `Pets created by key ${FIRST} in staging (${env.TABLE_NAME}):`,
      expect.stringMatching(/^ID +STATUS +NAME$/),
      ...ids.map((id) => expect.stringMatching(new RegExp(`^${id} +(available|-|sold) +"(Rex|Tom|Max)"$`))),
      '3 pets. Nothing removed (dry run): add --remove to remove them.',
    ]);
    expect(run.out).toMatch(new RegExp(`${tom} +- +"Tom"`));
    expect(sent).not.toContain('DeleteCommand');
    expect(await storedIds()).toHaveLength(6);
  });

  it("with --remove --yes removes exactly that key's pets: the other key's and older ones stay", async () => {
    const { second, legacy } = await twoKeysPets();
    const run = await pets([FIRST, '--remove', '--yes']);
    expect(run).toMatchObject({ code: EXIT_OK, err: '' });
    expect(run.out.split('\n').at(-1)).toBe(`Removed 3 pets created by key ${FIRST}.`);
    expect(await storedIds()).toEqual([legacy, ...second].sort());
    expect((await pets([FIRST])).out).toBe(`No pets created by key ${FIRST} in staging (${env.TABLE_NAME}).`);
  });

  it('at a terminal, removes only once the key id is typed back', async () => {
    await twoKeysPets();
    const questions: string[] = [];
    const answering = (answer: string) => async (question: string) => {
      questions.push(question);
      return answer;
    };
    const refused = await pets([FIRST, '--remove'], { ask: answering('y') });
    expect(refused).toMatchObject({
      code: EXIT_FAILED,
      err: expect.stringMatching(/^keys: not confirmed: nothing removed/),
    });
    expect(sent).not.toContain('DeleteCommand');
    expect(await storedIds()).toHaveLength(6);
    const confirmed = await pets([FIRST, '--remove'], { ask: answering(` ${FIRST}\n`) });
    expect(confirmed.code).toBe(EXIT_OK);
    expect(questions).toEqual([`Type the key id (${FIRST}) to remove these 3 pets: `, expect.any(String)]);
    expect(await storedIds()).toHaveLength(3);
  });

  it("never deletes a pet that is no longer the key's when its delete comes", async () => {
    const { first } = await twoKeysPets();
    // Between the listing and the deletes, one of the first key's pets comes to name the second key.
    fault = async (command) => {
      if (command.constructor.name !== 'DeleteCommand' || fault === undefined) return;
      fault = undefined;
      await documents.send(
        new UpdateCommand({
          TableName: env.TABLE_NAME,
          Key: { id: first[0] },
          UpdateExpression: 'SET createdBy = :other',
          ExpressionAttributeValues: { ':other': SECOND },
        }),
      );
    };
    const run = await pets([FIRST, '--remove', '--yes']);
    expect(run.out.split('\n').at(-1)).toBe(
      `Removed 2 pets created by key ${FIRST}. Skipped 1: gone, or no longer the key's.`,
    );
    expect(await storedIds()).toContain(first[0]);
  });

  it('stops at a failed delete in one line, saying how far it got; running it again finishes', async () => {
    await twoKeysPets();
    let deletes = 0;
    fault = async (command) => {
      if (command.constructor.name === 'DeleteCommand' && ++deletes === 2)
        throw Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' });
    };
    const stopped = await pets([FIRST, '--remove', '--yes']);
    expect(stopped.code).toBe(EXIT_FAILED);
    expect(stopped.err).toMatch(
      /^keys: removal stopped after \d pets? of 3 \(ThrottlingException: Rate exceeded\); run it again/,
    );
    expect(stopped.err.split('\n')).toHaveLength(1);
    fault = undefined;
    expect((await pets([FIRST, '--remove', '--yes'])).code).toBe(EXIT_OK);
    expect(await storedIds()).toHaveLength(3);
  });

  it("finds the pets table in the stage stack's TableName output when --pets-table is not given", async () => {
    await twoKeysPets();
    const described: string[] = [];
    const stacks: StackOutputsReader = {
      send: async (command: DescribeStacksCommand) => {
        described.push(command.input.StackName ?? '');
        const Outputs = [
          { OutputKey: 'ControlTableName', OutputValue: env.CONTROL_TABLE_NAME },
          { OutputKey: 'TableName', OutputValue: env.TABLE_NAME },
        ];
        return {
          $metadata: {},
          Stacks: [{ StackName: 'x', StackStatus: 'CREATE_COMPLETE', CreationTime: new Date(), Outputs }],
        } as DescribeStacksCommandOutput;
      },
    };
    const run = await runKeysCollected(['pets', SECOND, '--stage', 'production'], { client, stacks, env: {} });
    expect(run.code).toBe(EXIT_OK);
    expect(described).toEqual(['PetStore-production']);
    expect(run.out).toContain('2 pets. Nothing removed');
  });

  it.each([
    ['a whole key for the id', [keyOf(FIRST), '--stage', 'staging'], /"psk_…" is not a key id.*never the key/],
    ['no key id', ['--stage', 'staging'], /pets needs the id of the key/],
    ['a malformed key id', ['ABC', '--stage', 'staging'], /"ABC" is not a key id/],
    ['no --stage', [FIRST], /pets needs --stage/],
    ['--yes without --remove', [FIRST, '--stage', 'staging', '--yes'], /--yes confirms --remove/],
    ['--table', [FIRST, '--stage', 'staging', '--table', 'control'], /name it with --pets-table, not --table/],
    [
      '--remove with neither a terminal nor --yes',
      [FIRST, '--stage', 'staging', '--remove'],
      /without one, give --yes/,
    ],
  ])('refuses %s in one line, exit 2, before reading anything', async (_case, argv, message) => {
    const run = await runKeysCollected(['pets', ...argv], { client, env: {} });
    expect(run).toMatchObject({ code: EXIT_USAGE, out: '' });
    expect(run.err).toMatch(message);
    expect(run.err.split('\n')).toHaveLength(1);
    expect(sent).toEqual([]);
  });

  it('refuses --pets-table, --remove and --yes on the other commands', async () => {
    for (const option of [['--pets-table', 'x'], ['--remove'], ['--yes']]) {
      const run = await runKeysCollected(['list', '--stage', 'staging', ...option], { client, env: {} });
      expect(run).toMatchObject({ code: EXIT_USAGE, err: expect.stringMatching(/is only for pets/) });
    }
  });

  it('is in the usage text', () => {
    expect(USAGE).toMatch(/pets <keyId> --stage <stage> \[--remove \[--yes\]\]/);
  });
});

// Kept apart from the pets above: a delete of an id that is already gone is a skipped pet, not a failure.
describe('keys pets --remove after another removal', () => {
  it('counts a pet deleted meanwhile as skipped', async () => {
    const [id] = [await createAs(FIRST, 'Rex')];
    fault = async (command) => {
      if (command.constructor.name !== 'DeleteCommand' || fault === undefined) return;
      fault = undefined;
      await documents.send(new DeleteCommand({ TableName: env.TABLE_NAME, Key: { id } }));
    };
    const run = await pets([FIRST, '--remove', '--yes']);
    expect(run).toMatchObject({ code: EXIT_OK });
    expect(run.out.split('\n').at(-1)).toBe(
      `Removed 0 pets created by key ${FIRST}. Skipped 1: gone, or no longer the key's.`,
    );
  });
});
