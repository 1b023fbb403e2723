/** The contract tooling (generator, docs page, client, validators) never reaches a Lambda bundle. */
import { build, type Metafile } from 'esbuild';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { PROJECT_ROOT, esbuildOptions } from '../../infra/bundle/bundling.ts';
import { routes } from '../../lib/domain/routes.ts';

const outdir = mkdtempSync(join(tmpdir(), 'petstore-bundles-'));
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

/** What only tooling may use: our contract, docs and client code, and the libraries behind them. */
const TOOLING =
  /^(contract|client|tools|scripts|local|test)\/|node_modules\/(ajv|@seriousme|swagger-ui-dist|openapi-fetch|openapi-typescript|playwright-core|typescript)\//;

it.each(routes.map((route) => [route.operation, route] as const))(
  'the %s bundle holds no contract tooling',
  async (_, route) => {
    const options = esbuildOptions(join(PROJECT_ROOT, route.entry), join(outdir, route.operation));
    const { metafile } = (await build({ ...options, write: false })) as { metafile: Metafile };
    const inputs = Object.keys(metafile.inputs);
    expect(inputs).toContain(route.entry);
    expect(inputs.filter((input) => TOOLING.test(input))).toEqual([]);
  },
);
