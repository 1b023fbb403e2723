/**
 * `npm run bench`: bundle size, cold import and warm latency, each printed beside a baseline
 * measured in the same run on the same machine. Figures only; nothing here asserts a time.
 *
 * 1. Bundles: every function bundled with the deployed esbuild options, against a plain
 *    `esbuild --bundle --platform=node` bundle (CommonJS, not minified, default mainFields).
 * 2. Cold import: median time for a fresh Node process to import each bundle (what Lambda's init pays).
 * 3. Warm latency: each handler in-process against dynalite, against the bare DynamoDB call it makes.
 */
import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { build, type BuildOptions } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { createHandler as createPetHandler } from '../functions/createPet.ts';
import { createHandler as getPetHandler } from '../functions/getPet.ts';
import { createHandler as listPetsHandler } from '../functions/listPets.ts';
import { bundleOptions } from '../infra/bundling.ts';
import { createDocumentClient } from '../lib/petStore.ts';
import { routes } from '../lib/routes.ts';
import { serviceFromEnvironment } from '../lib/service.ts';
import { STATUS_INDEX } from '../lib/table.ts';
import { ensurePetsTable, startEmbeddedStore } from '../local/store.ts';
import { localContext, toProxyEvent } from '../local/proxyEvent.ts';
import { matchRoute } from '../lib/routes.ts';

const COLD_RUNS = Number(process.env.BENCH_COLD_RUNS ?? 7);
const WARM_REQUESTS = Number(process.env.BENCH_WARM_REQUESTS ?? 300);
const KEY = 'bench-key';

const kb = (bytes: number) => `${(bytes / 1024).toFixed(0)} KB`;
const ms = (value: number) => `${value.toFixed(1)} ms`;
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};

function table(title: string, header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(`\n${title}\n${line(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}`);
  for (const row of rows) console.log(line(row));
}

async function bundle(entry: string, outfile: string, options: BuildOptions): Promise<{ bytes: number; gzip: number }> {
  await build({ ...options, entryPoints: [entry], outfile, write: true, logLevel: 'silent' });
  const content = readFileSync(outfile);
  return { bytes: statSync(outfile).size, gzip: gzipSync(content).length };
}

/** Median wall time for a fresh Node process to import `file`, measured inside that process. */
function coldImport(file: string): number {
  const script = `const t = performance.now(); await import(${JSON.stringify(pathToFileURL(file).href)}); process.stdout.write(String(performance.now() - t));`;
  const env = { ...process.env, TABLE_NAME: 'pets', AWS_REGION: 'us-east-1', PETSTORE_API_KEYS: KEY, PETSTORE_CURSOR_SECRET: 'bench-cursor-secret-0123456789', NODE_NO_WARNINGS: '1' };
  const runs = Array.from({ length: COLD_RUNS }, () =>
    Number(execFileSync(process.execPath, ['--input-type=module', '-e', script], { env, encoding: 'utf8' })),
  );
  return percentile(runs, 50);
}

async function bundles(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-bench-'));
  const baseline: BuildOptions = { bundle: true, platform: 'node', format: 'cjs', target: 'node22' };
  const rows: string[][] = [];
  for (const route of routes) {
    const entry = resolve(route.entry);
    const plain = await bundle(entry, join(dir, `${route.operation}.baseline.cjs`), baseline);
    const ours = await bundle(entry, join(dir, `${route.operation}.mjs`), { ...bundleOptions(), sourcemap: false });
    const plainCold = coldImport(join(dir, `${route.operation}.baseline.cjs`));
    const oursCold = coldImport(join(dir, `${route.operation}.mjs`));
    rows.push([
      route.operation,
      kb(plain.bytes), kb(ours.bytes), `${((1 - ours.bytes / plain.bytes) * 100).toFixed(0)}%`,
      kb(plain.gzip), kb(ours.gzip),
      ms(plainCold), ms(oursCold), `${((1 - oursCold / plainCold) * 100).toFixed(0)}%`,
    ]);
  }
  table(
    `Bundles and cold import (median of ${COLD_RUNS} fresh processes; baseline = plain esbuild CJS bundle)`,
    ['function', 'baseline', 'deployed', 'smaller', 'base gz', 'dep gz', 'base import', 'dep import', 'faster'],
    rows,
  );
}

async function latency(): Promise<void> {
  const store = await startEmbeddedStore();
  const env = { TABLE_NAME: 'bench', DYNAMODB_ENDPOINT: store.endpoint, AWS_REGION: 'us-east-1', PETSTORE_API_KEYS: KEY, PETSTORE_CURSOR_SECRET: 'bench-cursor-secret-0123456789' };
  await ensurePetsTable(store.endpoint, env.TABLE_NAME);
  const service = serviceFromEnvironment(env);
  const documents = createDocumentClient({ endpoint: store.endpoint });
  const handlers = { listPets: listPetsHandler(service), createPet: createPetHandler(service), getPet: getPetHandler(service) };

  const event = (method: string, target: string, body?: unknown) => {
    const url = new URL(target, 'http://bench');
    const match = matchRoute(method, url.pathname);
    if (match.kind !== 'found') throw new Error(target);
    const headers = ['Host', 'bench', 'Authorization', `Bearer ${KEY}`, ...(body ? ['Content-Type', 'application/json'] : [])];
    const raw = Buffer.from(body ? JSON.stringify(body) : '');
    return toProxyEvent({ method, path: url.pathname, query: url.searchParams, rawHeaders: headers, body: raw, sourceIp: '127.0.0.1' }, match.route, match.pathParameters);
  };
  /** Bare call and handler alternate, request by request, so both see the same JIT and store state. */
  const interleaved = async (bare: (i: number) => Promise<unknown>, full: (i: number) => Promise<unknown>) => {
    const samples = { bare: [] as number[], full: [] as number[] };
    for (let i = 0; i < WARM_REQUESTS; i++) {
      for (const [kind, run] of [['bare', bare], ['full', full]] as const) {
        const t = performance.now();
        await run(i);
        samples[kind].push(performance.now() - t);
      }
    }
    return samples;
  };

  const ids: number[] = [];
  const cases: [string, (i: number) => Promise<unknown>, (i: number) => Promise<unknown>][] = [
    [
      'createPet',
      (i) => documents.send(new PutCommand({ TableName: env.TABLE_NAME, Item: { id: 10_000_000 + i, name: `Bare ${i}`, categoryId: 1, status: 'available' }, ConditionExpression: 'attribute_not_exists(id)' })),
      async (i) => {
        const res = await handlers.createPet(event('POST', '/pets', { name: `Pet ${i}`, categoryId: 1, status: 'available' }), localContext('bench'));
        ids.push(JSON.parse(res.body).id);
      },
    ],
    [
      'getPet',
      (i) => documents.send(new GetCommand({ TableName: env.TABLE_NAME, Key: { id: ids[i % ids.length] } })),
      (i) => handlers.getPet(event('GET', `/pets/${ids[i % ids.length]}`), localContext('bench')),
    ],
    [
      'listPets?status&limit=20',
      () => documents.send(new QueryCommand({ TableName: env.TABLE_NAME, IndexName: STATUS_INDEX, KeyConditionExpression: '#s = :s', ExpressionAttributeNames: { '#s': 'status' }, ExpressionAttributeValues: { ':s': 'available' }, Limit: 21 })),
      () => handlers.listPets(event('GET', '/pets?status=available&limit=20'), localContext('bench')),
    ],
  ];
  const rows: string[][] = [];
  for (const [name, bare, full] of cases) {
    const { bare: base, full: ours } = await interleaved(bare, full);
    rows.push([name, ms(percentile(base, 50)), ms(percentile(ours, 50)), ms(percentile(base, 95)), ms(percentile(ours, 95)), ms(percentile(ours, 50) - percentile(base, 50))]);
  }
  table(
    `Warm latency, in-process on dynalite (${WARM_REQUESTS} sequential requests each, interleaved; baseline = the bare DynamoDB call)`,
    ['operation', 'bare p50', 'handler p50', 'bare p95', 'handler p95', 'overhead p50'],
    rows,
  );
  documents.destroy();
  await store.close();
}

console.log(`Node ${process.version}, ${process.arch}; figures from this machine, this run.`);
await bundles();
await latency();
