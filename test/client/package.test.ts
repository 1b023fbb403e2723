/**
 * The client as a client team gets it: built, packed with `npm pack`, installed from the tarball into
 * a fresh project outside this repository (nothing else of ours in it), a usage type-checked against
 * the published declarations, then run with Node against the local API.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { LocalApi } from '../../local/server.ts';
import { startTestApi } from '../support/localApi.ts';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLIENT_DIR = join(ROOT, 'client');
const TSC = join(ROOT, 'node_modules', '.bin', 'tsc');
const KEY = 'client-package-test-key';
const work = mkdtempSync(join(tmpdir(), 'petstore-client-package-'));
const project = join(work, 'consumer');
let api: LocalApi;
let packed: { filename: string; files: { path: string }[] };

/** npm with the registry reachable but the cache preferred; no audit, no funding notes. */
const npm = (args: string[], cwd: string) => run('npm', [...args, '--prefer-offline', '--no-audit', '--no-fund'], { cwd, timeout: 240_000 });

beforeAll(async () => {
  api = await startTestApi(KEY);
  await npm(['run', 'build'], CLIENT_DIR);
  const { stdout } = await npm(['pack', '--json', '--ignore-scripts', '--pack-destination', work], CLIENT_DIR);
  [packed] = JSON.parse(stdout) as [typeof packed];
}, 300_000);
afterAll(async () => {
  await api?.close();
});

it('packs the built JavaScript, its declarations, the README and package.json, and no sources', () => {
  const files = packed.files.map((file) => file.path).sort();
  expect(files).toEqual(expect.arrayContaining(['README.md', 'package.json', 'dist/index.js', 'dist/index.d.ts', 'dist/schema.d.ts']));
  expect(files.filter((file) => !/^(README\.md|package\.json|dist\/\w+\.(js|d\.ts))$/.test(file))).toEqual([]);
  const manifest = JSON.parse(readFileSync(join(CLIENT_DIR, 'package.json'), 'utf8'));
  expect(manifest.dependencies).toEqual({ 'openapi-fetch': expect.any(String) });
  expect(manifest.exports['.']).toEqual({ types: './dist/index.d.ts', import: './dist/index.js' });
});

it('installs into a fresh project, type-checks a usage with the published types, and runs it against the local API', async () => {
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  await npm(['install', join(work, packed.filename)], project);
  expect(readdirSync(join(project, 'node_modules')).filter((name) => !name.startsWith('.')).sort()).toEqual([
    '@petstore',
    'openapi-fetch',
    'openapi-typescript-helpers',
  ]);

  writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({
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
  }));
  writeFileSync(join(project, 'usage.ts'), usage(api.url, KEY));
  await run(TSC, ['-p', 'tsconfig.json'], { cwd: project }).catch((error: { stdout: string }) => {
    throw new Error(`the usage does not type-check against the published types:\n${error.stdout}`);
  });

  const { stdout } = await run(process.execPath, ['out/usage.js'], { cwd: project });
  const result = JSON.parse(stdout);
  const ids = result.created.map((pet: { id: number }) => pet.id);
  expect(result.created.map((pet: { name: string }) => pet.name)).toEqual(['Ada', 'Bo', 'Cy']);
  expect(result.read).toEqual(result.created[0]);
  expect(result.pages).toEqual([ids.slice(0, 2), ids.slice(2)]);
  expect(result.all).toEqual(ids);
  expect(result.notFound).toBe('404 NOT_FOUND');
}, 300_000);

/** What a client team would write, with the API's address and key filled in. */
function usage(baseUrl: string, apiKey: string): string {
  return `import { petStoreClient, PetStoreError, type Page, type Pet } from '@petstore/client';

const store = petStoreClient({ baseUrl: ${JSON.stringify(baseUrl)}, apiKey: ${JSON.stringify(apiKey)} });

const created: Pet[] = [];
for (const name of ['Ada', 'Bo', 'Cy']) created.push((await store.createPet({ name, categoryId: 7, status: 'pending' })).pet);
const { pet: read } = await store.getPet(created[0]!.id);

const pages: number[][] = [];
let page: Page = await store.listPets({ status: 'pending', limit: 2 });
pages.push(page.pets.map((pet) => pet.id));
while (page.next) {
  page = await store.followNext(page.next);
  pages.push(page.pets.map((pet) => pet.id));
}
const all: number[] = [];
for await (const pet of store.allPets({ status: 'pending', limit: 2 })) all.push(pet.id);

let notFound: string | undefined;
try {
  await store.getPet(Number.MAX_SAFE_INTEGER);
} catch (error) {
  if (error instanceof PetStoreError) notFound = \`\${error.status} \${error.code}\`;
}

// The published types are the contract's: a wrong field type does not compile.
// @ts-expect-error categoryId is an integer, not a string
const wrong = () => store.createPet({ name: 'Typo', categoryId: '7' });
void wrong;

console.log(JSON.stringify({ created, read, pages, all, notFound }));
`;
}
