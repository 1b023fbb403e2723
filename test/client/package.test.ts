/**
 * The client as a client team gets it: built, packed with `npm pack`, installed from the tarball into
 * fresh projects outside this repository (nothing else of ours in them), an ES module project and a
 * CommonJS one (`npm init -y`'s default), a usage type-checked against the published declarations in
 * each, then run against the local API with Node 22 and with the host's Node.
 */
import { execFile, execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalApi, type LocalApi } from '../../local/server.ts';
import { startTestApi } from '../support/localApi.ts';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLIENT_DIR = join(ROOT, 'client');
const TSC = join(ROOT, 'node_modules', '.bin', 'tsc');
const KEY = 'client-package-test-key';
const work = mkdtempSync(join(tmpdir(), 'petstore-client-package-'));
let api: LocalApi;
let packed: { filename: string; files: { path: string }[] };

/**
 * The Nodes a consumer runs: the project's Node 22 (the platform's optional dependency), the Node vitest
 * runs on, and the Node that ran npm (the host's, even under `npm test`); each binary once.
 */
const NODES = [
  ...new Map(
    [join(ROOT, 'node_modules', '.bin', 'node'), process.execPath, process.env.npm_node_execpath]
      .filter((path): path is string => path !== undefined && existsSync(path))
      .map((path) => [realpathSync(path), path]),
  ).values(),
].map((path) => [execFileSync(path, ['--version'], { encoding: 'utf8' }).trim(), path] as const);

/** npm with the registry reachable but the cache preferred; no audit, no funding notes. */
const npm = (args: string[], cwd: string) =>
  run('npm', [...args, '--prefer-offline', '--no-audit', '--no-fund'], { cwd, timeout: 240_000 });

beforeAll(async () => {
  api = await startTestApi(KEY);
  await npm(['run', 'build'], CLIENT_DIR);
  const { stdout } = await npm(['pack', '--json', '--ignore-scripts', '--pack-destination', work], CLIENT_DIR);
  [packed] = JSON.parse(stdout) as [typeof packed];
}, 300_000);
afterAll(async () => {
  await api?.close();
  rmSync(work, { recursive: true, force: true });
});

it("packs the built JavaScript, its declarations, the README and package.json, and no sources, into the test's own directory", () => {
  const files = packed.files.map((file) => file.path).sort();
  expect(files).toEqual(
    expect.arrayContaining(['README.md', 'package.json', 'dist/index.js', 'dist/index.d.ts', 'dist/schema.d.ts']),
  );
  expect(files.filter((file) => !/^(README\.md|package\.json|dist\/\w+\.(js|d\.ts))$/.test(file))).toEqual([]);
  const manifest = JSON.parse(readFileSync(join(CLIENT_DIR, 'package.json'), 'utf8'));
  expect(manifest.dependencies).toEqual({ 'openapi-fetch': expect.any(String) });
  expect(readdirSync(CLIENT_DIR).filter((file) => file.endsWith('.tgz'))).toEqual([]);
});

describe.each([
  { system: 'an ES module project', type: 'module' },
  { system: 'a CommonJS project', type: 'commonjs' },
] as const)('in $system', ({ type }) => {
  const project = join(work, type);

  beforeAll(async () => {
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: `consumer-${type}`, private: true, type }));
    await npm(['install', join(work, packed.filename)], project);
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'nodenext',
          moduleResolution: 'nodenext',
          lib: ['ES2023', 'DOM'],
          types: [],
          strict: true,
          outDir: 'out',
        },
        include: ['usage.ts'],
      }),
    );
    writeFileSync(join(project, 'usage.ts'), typedUsage(type, api.url, KEY));
    writeFileSync(join(project, 'plain.js'), plainUsage(type, api.url, KEY));
  }, 300_000);

  it('installs the client and its one dependency only', () => {
    expect(
      readdirSync(join(project, 'node_modules'))
        .filter((name) => !name.startsWith('.'))
        .sort(),
    ).toEqual(['@petstore', 'openapi-fetch', 'openapi-typescript-helpers']);
  });

  it(`type-checks a usage with the published types (module NodeNext, ${type === 'module' ? 'import' : 'compiled to require'})`, async () => {
    await run(TSC, ['-p', 'tsconfig.json'], { cwd: project }).catch((error: { stdout: string }) => {
      throw new Error(`the usage does not type-check against the published types:\n${error.stdout}`);
    });
    const compiled = readFileSync(join(project, 'out', 'usage.js'), 'utf8');
    // The module system the consumer's own code runs in, as tsc emitted it.
    expect(/\brequire\("@petstore\/client"\)/.test(compiled)).toBe(type === 'commonjs');
  });

  describe.each(NODES)('on Node %s', (_version, path) => {
    it('runs the typed usage against the local API', async () => {
      await restartApi();
      const { stdout, stderr } = await runWith(path, 'out/usage.js', project);
      const result = JSON.parse(stdout);
      const ids = result.created.map((pet: { id: number }) => pet.id);
      expect(result.created.map((pet: { name: string }) => pet.name)).toEqual(['Ada', 'Bo', 'Cy']);
      expect(result.read).toEqual(result.created[0]);
      expect(result.deprecation).toEqual(GET_PET_DEPRECATION);
      expect(result.pages).toEqual([ids.slice(0, 2), ids.slice(2)]);
      expect(result.all).toEqual(ids);
      expect(result.notFound).toEqual(NOT_FOUND);
      expect(stderr).toBe('');
    });

    it(`runs plain JavaScript (${type === 'commonjs' ? 'require()' : 'import'}) of the client against the local API`, async () => {
      await restartApi();
      const { stdout, stderr } = await runWith(path, 'plain.js', project);
      const result = JSON.parse(stdout);
      expect(result.read).toEqual(result.created);
      expect(result.deprecation).toEqual(GET_PET_DEPRECATION);
      expect(result.notFound).toEqual(NOT_FOUND);
      expect(stderr).toBe('');
    });
  });
});

/** The Error answer of a missing pet, as PetStoreError tells it: its message carries status, code and request id. */
const NOT_FOUND = {
  status: 404,
  code: 'NOT_FOUND',
  message: expect.stringMatching(/^404 NOT_FOUND: .+ \(request id [\w-]+\)$/),
};

/** getPet is deprecated by the API: every answer tells when, until when and what replaces it. */
const GET_PET_DEPRECATION = {
  deprecation: expect.stringMatching(/^@\d+$/),
  sunset: expect.stringMatching(/ GMT$/),
  link: expect.stringMatching(/\/v1\/pets>; rel="successor-version"$/),
};

/**
 * A fresh local API (an empty store) at the address the usages were written with, so each run lists
 * only the pets it created. startTestApi set the key and the in-memory store; the closed store's
 * endpoint, which the handlers left in the environment, is dropped as startTestApi does.
 */
async function restartApi(): Promise<void> {
  const { port } = new URL(api.url);
  await api.close();
  delete process.env.DYNAMODB_ENDPOINT;
  api = await startLocalApi({ port: Number(port), quiet: true });
}

/** A consumer's file run with one Node binary; a failure shows what the consumer would see. */
async function runWith(node: string, file: string, cwd: string) {
  return run(node, [file], { cwd }).catch((error: { stderr: string }) => {
    throw new Error(`${file} failed on ${node}:\n${error.stderr}`);
  });
}

/**
 * What a TypeScript client team would write, with the API's address and key filled in. In a CommonJS
 * project the same code sits in an async function (no top-level await there) and tsc emits require().
 */
function typedUsage(type: 'module' | 'commonjs', baseUrl: string, apiKey: string): string {
  const body = `const store = petStoreClient({ baseUrl: ${JSON.stringify(baseUrl)}, apiKey: ${JSON.stringify(apiKey)} });

const created: Pet[] = [];
for (const name of ['Ada', 'Bo', 'Cy']) created.push((await store.createPet({ name, categoryId: 7, status: 'pending' })).pet);
const { pet: read, deprecation } = await store.getPet(created[0]!.id);

const pages: number[][] = [];
let page: Page = await store.listPets({ status: 'pending', limit: 2 });
pages.push(page.pets.map((pet) => pet.id));
while (page.next) {
  page = await store.followNext(page.next);
  pages.push(page.pets.map((pet) => pet.id));
}
const all: number[] = [];
for await (const pet of store.allPets({ status: 'pending', limit: 2 })) all.push(pet.id);

let notFound: { status: number; code: string; message: string } | undefined;
try {
  await store.getPet(Number.MAX_SAFE_INTEGER);
} catch (error) {
  if (error instanceof PetStoreError) notFound = { status: error.status, code: error.code, message: error.message };
}

// The published types are the contract's: a wrong field type does not compile.
// @ts-expect-error categoryId is an integer, not a string
const wrong = () => store.createPet({ name: 'Typo', categoryId: '7' });
void wrong;

console.log(JSON.stringify({ created, read, deprecation, pages, all, notFound }));
`;
  const imports = `import { petStoreClient, PetStoreError, type Page, type Pet } from '@petstore/client';\n\n`;
  // An unhandled rejection of main() ends the process with code 1 and the error on stderr.
  return type === 'module'
    ? imports + body
    : `${imports}async function main(): Promise<void> {\n${body}}\n\nvoid main();\n`;
}

/** What a JavaScript newcomer writes in a CommonJS project: require() and no types. */
/** Plain JavaScript, as a newcomer writes it in a project of `type`: `require` in CommonJS, `import` in an ES module. */
function plainUsage(type: 'module' | 'commonjs', baseUrl: string, apiKey: string): string {
  const load =
    type === 'commonjs'
      ? "const { petStoreClient, PetStoreError } = require('@petstore/client');"
      : "import { petStoreClient, PetStoreError } from '@petstore/client';";
  return `${load}

const store = petStoreClient({ baseUrl: ${JSON.stringify(baseUrl)}, apiKey: ${JSON.stringify(apiKey)} });

async function main() {
  const { pet: created } = await store.createPet({ name: 'Dot', categoryId: 7, status: 'sold' });
  const { pet: read, deprecation } = await store.getPet(created.id);
  let notFound;
  try {
    await store.getPet(Number.MAX_SAFE_INTEGER);
  } catch (error) {
    if (error instanceof PetStoreError) notFound = { status: error.status, code: error.code, message: error.message };
  }
  console.log(JSON.stringify({ created, read, deprecation, notFound }));
}

main();
`;
}
