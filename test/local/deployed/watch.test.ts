/**
 * `start:deployed --watch` (local/deployed/watch.ts) on a copy of functions/ and lib/: an edit to a
 * function in the copy is served by the running stage, only that function is rebuilt, and a client
 * that keeps sending requests through the swap sees no failure. The time from save to the new
 * answer is printed (docs/local-development.md quotes it), never asserted.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../infra/bundling.ts';
import { stackName } from '../../../infra/stages.ts';
import { startDeployedApi } from '../../../local/deployed/deployedApi.ts';
import { DEFAULT_OUTDIR, ensureCloudAssembly } from '../../../local/deployed/freshAssembly.ts';
import { BUNDLED_SOURCES, watchDeployedStage, type StageWatch } from '../../../local/deployed/watch.ts';
import { DEPLOY_PARAMETERS, issueKey } from '../../support/deployedStage.ts';
import { fetchApi } from '../../support/http.ts';

/** Each client's interval between requests: two clients stay under 10 requests a second per key. */
const PACE_MS = 110;
const MISSING_ID = 987654;
const OLD_MESSAGE = `No pet has the id ${MISSING_ID}.`;
const NEW_MESSAGE = `Pet ${MISSING_ID} is not in the inventory.`;

describe('start:deployed --watch', () => {
  let copy: string;
  let watching: StageWatch;
  /** One key per client: a staging key's own limit is 10 requests a second. */
  let keys: string[];
  const reports: string[] = [];
  const logs: string[] = [];

  beforeAll(async () => {
    await ensureCloudAssembly(DEFAULT_OUTDIR, { quiet: true });
    copy = mkdtempSync(join(tmpdir(), 'petstore-watch-'));
    for (const folder of BUNDLED_SOURCES) cpSync(join(PROJECT_ROOT, folder), join(copy, folder), { recursive: true });
    cpSync(join(PROJECT_ROOT, 'tsconfig.json'), join(copy, 'tsconfig.json'));
    symlinkSync(join(PROJECT_ROOT, 'node_modules'), join(copy, 'node_modules'));
    watching = await watchDeployedStage({
      start: () =>
        startDeployedApi({ stackName: stackName('staging'), outdir: DEFAULT_OUTDIR, port: 0, parameters: DEPLOY_PARAMETERS, log: (line) => logs.push(line), report: () => undefined }),
      resynthesize: () => ensureCloudAssembly(DEFAULT_OUTDIR, { quiet: true }),
      sourceRoot: copy,
      runnerDir: join(copy, '.watch'),
      report: (line) => reports.push(line),
    });
    keys = [await issueKey('staging', watching.api), await issueKey('staging', watching.api)];
  }, 120_000);

  afterAll(async () => {
    await watching?.close();
    if (copy) rmSync(copy, { recursive: true, force: true });
  });

  it('serves an edited function without dropping a request, rebuilding only that function', async () => {
    const url = `${watching.api.url}/pets/${MISSING_ID}`;
    const get = (key: string) => fetchApi(url, { headers: { Authorization: `Bearer ${key}` } });
    expect((await get(keys[0]!)).body.message).toBe(OLD_MESSAGE);

    // Two clients, a request each every PACE_MS (under their keys' and the stage's throttles), from
    // before the save until the new answer is served.
    const answers: { status: number; message: unknown }[] = [];
    const failures: string[] = [];
    let servedAt: number | undefined;
    const client = async (key: string) => {
      while (servedAt === undefined) {
        const pace = sleep(PACE_MS);
        try {
          const { status, body } = await get(key);
          answers.push({ status, message: body.message });
          if (body.message === NEW_MESSAGE) servedAt ??= performance.now();
        } catch (error) {
          failures.push(String(error));
        }
        await pace;
      }
    };
    const clients = [client(keys[0]!), sleep(PACE_MS / 2).then(() => client(keys[1]!))];
    await sleep(500);

    const file = join(copy, 'functions', 'getPet.ts');
    const source = readFileSync(file, 'utf8');
    const edited = source.replace('`No pet has the id ${petId}.`', '`Pet ${petId} is not in the inventory.`');
    expect(edited).not.toBe(source);
    const savedAt = performance.now();
    writeFileSync(file, edited);
    await Promise.race([
      Promise.all(clients),
      new Promise((_, reject) => setTimeout(() => reject(new Error(`not served after 60 s; reports: ${reports.join(' | ')}`)), 60_000)),
    ]);

    const reloadMs = Math.round(servedAt! - savedAt);
    console.log(`start:deployed --watch: save to new answer in ${reloadMs} ms (${answers.length} requests during the run); ${reports.join(' | ')}`);
    expect(failures).toEqual([]);
    expect(answers.filter((answer) => answer.status !== 404 || ![OLD_MESSAGE, NEW_MESSAGE].includes(answer.message as string))).toEqual([]);
    expect(answers.some((answer) => answer.message === OLD_MESSAGE)).toBe(true);
    // One reload line, naming the file and the one function whose bundle holds it.
    expect(reports).toHaveLength(1);
    const getPetName = watching.api.functions.find((fn) => /GetPet/.test(fn.logicalId))!.functionName;
    expect(reports[0]).toMatch(new RegExp(`^reload: functions/getPet\\.ts changed; rebuilt ${getPetName} in \\d+ ms$`));
    // The deployable assets are untouched: the new code exists only in the runner's folder.
    const asset = readFileSync(join(watching.api.stack.assetDir(watching.api.functions.find((fn) => fn.functionName === getPetName)!.logicalId), 'index.mjs'), 'utf8');
    expect(asset).toContain('No pet has the id');
    expect(asset).not.toContain('is not in the inventory');
  }, 120_000);
});
