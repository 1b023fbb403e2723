/**
 * `start:deployed --watch` (tools/stage-emulator/src/watch.ts) on a copy of functions/ and lib/: an edit to a
 * function in the copy is served by the running stage, only that function is rebuilt, a client that
 * keeps sending requests through the swap sees no failure, and a request in flight at the swap
 * finishes on the old code while requests sent after the reload line get the new. An edit under the
 * watched infra folder (a folder of the test's own, never the repository's infra/) re-synthesizes
 * and restarts the stage on the same port. Reload times are printed (docs/local-development.md
 * quotes them), never asserted.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUNDLE_FILE, PROJECT_ROOT } from '../../infra/bundle/bundling.ts';
import { stackName } from '../../infra/stages.ts';
import { startDeployedApi } from '../../tools/stage-emulator/src/deployedApi.ts';
import { ensureCloudAssembly } from '../../tools/stage-emulator/src/freshAssembly.ts';
import { BUNDLED_SOURCES } from '../../local/sources.ts';
import { watchDeployedStage, type StageWatch } from '../../tools/stage-emulator/src/watch.ts';
import { DEPLOY_PARAMETERS, issueKey } from '../support/deployedStage.ts';
import { fetchApi } from '../support/http.ts';
import { freePort } from '../support/ports.ts';
import { saveEveryWay } from '../support/editorSaves.ts';
import { DEFAULT_OUTDIR, EDGE_ERRORS, STAGE_APP } from '../../local/stageApp.ts';

/** Each client's interval between requests: two clients stay under 10 requests a second per key. */
const PACE_MS = 110;
/** How many answers to requests sent after the reload line the clients collect before they stop. */
const AFTER_RELOAD = 4;
/** The functional limit on any wait; nothing about time is asserted below it. */
const WAIT_MS = 60_000;
const MISSING_ID = 987654;
/** The id whose request the first edit holds until the test releases it. */
const HELD_ID = 987655;
const OLD_TEMPLATE = '`No pet has the id ${petId}.`';
const NEW_TEMPLATE = '`Pet ${petId} is not in the inventory.`';
const oldMessage = (id: number) => `No pet has the id ${id}.`;
const newMessage = (id: number) => `Pet ${id} is not in the inventory.`;
/** What the held request's sandbox logs once it holds the request. */
const HELD_MARKER = 'holding the request until released';
const PARSED = "const { petId } = parseOrThrow(PetIdPath, event.pathParameters ?? {}, 'path');";
const READ = 'const pet = await getPet(pets, petId);';

describe('start:deployed --watch', () => {
  let copy: string;
  let releaseFile: string;
  let watching: StageWatch;
  /** One key per client (a staging key's own limit is 10 requests a second), and one for the held request. */
  let keys: string[];
  const reports: string[] = [];
  /** When each report line arrived (performance.now()). */
  const reportedAt: number[] = [];
  const logs: string[] = [];
  let starts = 0;
  let resyntheses = 0;
  /** A key of the stage the infra change restarted (issued before its authorizer first read the keys). */
  let restartedStageKey: string | undefined;

  const get = (id: number, key: string) =>
    fetchApi(`${watching.api.url}/pets/${id}`, { headers: { Authorization: `Bearer ${key}` } });
  const getPetName = () => watching.api.functions.find((fn) => /GetPet/.test(fn.logicalId))!.functionName;
  const rebuiltGetPet = () => new RegExp(`^reload: functions/getPet\\.ts changed; rebuilt ${getPetName()} in \\d+ ms$`);

  /** Replaces `from` with `to` in the copy's getPet and saves it; returns when it was saved. */
  const editGetPet = (from: string, to: string): number => {
    const file = join(copy, 'functions', 'getPet.ts');
    const source = readFileSync(file, 'utf8');
    const edited = source.replace(from, to);
    expect(edited).not.toBe(source);
    const savedAt = performance.now();
    writeFileSync(file, edited);
    return savedAt;
  };

  /** Called at each report line, and at each log line for those that want them. */
  const listeners = new Set<{ logs: boolean; ask: () => void }>();
  const heard = (kind: 'report' | 'log') => {
    for (const listener of [...listeners]) if (kind === 'report' || listener.logs) listener.ask();
  };

  /**
   * Waits until `probe` holds, asking it now and at each report line (a reload says it is done in
   * one), and at each log line unless it sends a request (whose own lines would ask it again); fails
   * after WAIT_MS (a safety timeout) saying what it waited for.
   */
  const until = (what: string, probe: () => boolean | Promise<boolean>, sendsRequests = false): Promise<void> =>
    new Promise((resolve, reject) => {
      let asking = false;
      let askAgain = false;
      const listener = {
        logs: !sendsRequests,
        ask: (): void => {
          if (asking) {
            askAgain = true;
            return;
          }
          asking = true;
          void (async () => {
            do {
              askAgain = false;
              if (await probe()) return done();
            } while (askAgain);
          })()
            .catch(done)
            .finally(() => (asking = false));
        },
      };
      const done = (error?: unknown) => {
        listeners.delete(listener);
        clearTimeout(timer);
        if (error) reject(error);
        else resolve();
      };
      // A safety timeout: fails the wait when the probe never holds.
      const timer = setTimeout(
        () => done(new Error(`${what}: not within ${WAIT_MS / 1000} s; reports: ${reports.join(' | ')}`)),
        WAIT_MS,
      );
      listeners.add(listener);
      listener.ask();
    });

  beforeAll(async () => {
    await ensureCloudAssembly(DEFAULT_OUTDIR, STAGE_APP, { quiet: true });
    copy = mkdtempSync(join(tmpdir(), 'petstore-watch-'));
    releaseFile = join(copy, 'release-held-request');
    for (const folder of BUNDLED_SOURCES) cpSync(join(PROJECT_ROOT, folder), join(copy, folder), { recursive: true });
    cpSync(join(PROJECT_ROOT, 'tsconfig.json'), join(copy, 'tsconfig.json'));
    symlinkSync(join(PROJECT_ROOT, 'node_modules'), join(copy, 'node_modules'));
    // The infra folder watched is the copy's own: the repository's infra/ is never edited.
    mkdirSync(join(copy, STAGE_APP.infraSource));
    // A fixed port, as `--port 3100` is: the documented restart keeps it.
    const port = await freePort();
    watching = await watchDeployedStage({
      app: STAGE_APP,
      start: () => {
        starts += 1;
        return startDeployedApi({
          stackName: stackName('staging'),
          outdir: DEFAULT_OUTDIR,
          app: STAGE_APP,
          edgeErrors: EDGE_ERRORS,
          port,
          parameters: DEPLOY_PARAMETERS,
          log: (line) => {
            logs.push(line);
            heard('log');
          },
          report: () => undefined,
        });
      },
      resynthesize: () => {
        resyntheses += 1;
        return ensureCloudAssembly(DEFAULT_OUTDIR, STAGE_APP, { quiet: true });
      },
      sourceRoot: copy,
      infraDir: join(copy, STAGE_APP.infraSource),
      runnerDir: join(copy, '.watch'),
      report: (line) => {
        reports.push(line);
        reportedAt.push(performance.now());
        heard('report');
      },
    });
    keys = await Promise.all([0, 1, 2].map(() => issueKey('staging', watching.api)));
  }, 120_000);

  afterAll(async () => {
    await watching?.close();
    if (copy) rmSync(copy, { recursive: true, force: true });
  });

  it('serves an edited function without dropping a request: one in flight finishes on the old code, later ones get the new', async () => {
    expect((await get(MISSING_ID, keys[0]!)).body.message).toBe(oldMessage(MISSING_ID));

    // Edit 1: getPet holds HELD_ID's request until the test releases it (the Lambda's 10 s timeout
    // bounds it), then answers it without a store call: the hold may outlast the request's store
    // budget (2.5 s), after which a call would be aborted (503) whatever code served it. It reads
    // node:fs by process.getBuiltinModule, so the edit needs no import.
    const heldSavedAt = editGetPet(
      `${PARSED}\n    ${READ}`,
      `${PARSED}\n    if (String(petId) === '${HELD_ID}') {\n      console.log('${HELD_MARKER}');\n` +
        // The sandbox, another process, checks for the file the test writes to release it.
        `      while (!process.getBuiltinModule('node:fs').existsSync(${JSON.stringify(releaseFile)})) await new Promise((resolve) => setTimeout(resolve, 20));\n    }\n` +
        `    const pet = String(petId) === '${HELD_ID}' ? undefined : await getPet(pets, petId);`,
    );
    await until('the reload line of edit 1', () => reports.length >= 1);
    const heldReloadMs = Math.round(reportedAt[0]! - heldSavedAt);

    // The held request, in flight on edit 1's code (its sandbox said so) before edit 2 is saved.
    let held: { status: number; message: unknown } | { error: string } | undefined;
    const heldSentAt = performance.now();
    const heldAnswer = get(HELD_ID, keys[2]!).then(
      ({ status, body }) => {
        held = { status, message: body.message };
      },
      (error: unknown) => {
        held = { error: String(error) };
      },
    );
    await until('the held request in its sandbox', () => logs.some((line) => line.includes(HELD_MARKER)));

    // Two clients, a request each every PACE_MS (under their keys' and the stage's throttles), from
    // before the save until AFTER_RELOAD requests sent after the reload line have been answered.
    const answers: { sentAt: number; answeredAt: number; status: number; message: unknown }[] = [];
    const failures: string[] = [];
    let markTwoAnswered = () => {};
    const twoAnswered = new Promise<void>((resolve) => (markTwoAnswered = resolve));
    const sentAfterReload = () =>
      answers.filter((answer) => reportedAt[1] !== undefined && answer.sentAt > reportedAt[1]);
    const client = async (key: string) => {
      while (sentAfterReload().length < AFTER_RELOAD) {
        // Pacing under the keys' and the stage's throttles, which refill by wall time: not an ordering.
        const pace = sleep(PACE_MS);
        const sentAt = performance.now();
        try {
          const { status, body } = await get(MISSING_ID, key);
          answers.push({ sentAt, answeredAt: performance.now(), status, message: body.message });
          if (answers.length >= 2) markTwoAnswered();
        } catch (error) {
          failures.push(String(error));
        }
        await pace;
      }
    };
    // The second client half a pace behind the first: their requests interleave under the throttles.
    const clients = [client(keys[0]!), sleep(PACE_MS / 2).then(() => client(keys[1]!))];
    // Two answers, on the old code, before the save.
    await twoAnswered;

    // Edit 2: the message. The held request is still in flight when it is rebuilt and swapped in.
    const savedAt = editGetPet(OLD_TEMPLATE, NEW_TEMPLATE);
    let safety: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(clients),
      // A safety timeout: fails the wait when the clients never see the reload.
      new Promise((_, reject) => {
        safety = setTimeout(
          () =>
            reject(
              new Error(
                `the new answer after the reload line: not within ${WAIT_MS / 1000} s; reports: ${reports.join(' | ')}`,
              ),
            ),
          WAIT_MS,
        );
      }),
    ]).finally(() => clearTimeout(safety));
    const inFlightAfterReload = held === undefined;
    writeFileSync(releaseFile, '');
    await heldAnswer;
    const heldMs = Math.round(performance.now() - heldSentAt);
    // The same id asked after the reload line (and the release): the new code answers it.
    const heldIdNow = await get(HELD_ID, keys[2]!);

    const firstNew = Math.min(
      ...answers.filter((answer) => answer.message === newMessage(MISSING_ID)).map((answer) => answer.answeredAt),
    );
    console.log(
      `start:deployed --watch: edit 1 save to reload line ${heldReloadMs} ms; edit 2 save to reload line ${Math.round(reportedAt[1]! - savedAt)} ms,` +
        ` save to first new answer received ${Math.round(firstNew - savedAt)} ms; held request answered after ${heldMs} ms;` +
        ` ${answers.length} paced requests; ${reports.join(' | ')}`,
    );
    expect(failures).toEqual([]);
    expect(
      answers.filter(
        (answer) =>
          answer.status !== 404 || ![oldMessage(MISSING_ID), newMessage(MISSING_ID)].includes(answer.message as string),
      ),
    ).toEqual([]);
    expect(answers.some((answer) => answer.message === oldMessage(MISSING_ID))).toBe(true);
    // Every request sent after the reload line got the new code.
    expect(sentAfterReload().map((answer) => answer.message)).toEqual(
      sentAfterReload().map(() => newMessage(MISSING_ID)),
    );
    // The request in flight at the swap finished, on the code it started on.
    expect(inFlightAfterReload).toBe(true);
    expect(held).toEqual({ status: 404, message: oldMessage(HELD_ID) });
    expect({ status: heldIdNow.status, message: heldIdNow.body.message }).toEqual({
      status: 404,
      message: newMessage(HELD_ID),
    });
    // One reload line per edit, naming the file and the one function whose bundle holds it.
    expect(reports).toEqual([expect.stringMatching(rebuiltGetPet()), expect.stringMatching(rebuiltGetPet())]);
    // The deployable assets are untouched: the new code exists only in the runner's folder.
    const asset = readFileSync(
      join(
        watching.api.stack.assetDir(watching.api.functions.find((fn) => fn.functionName === getPetName())!.logicalId),
        BUNDLE_FILE,
      ),
      'utf8',
    );
    expect(asset).toContain('No pet has the id');
    expect(asset).not.toContain('is not in the inventory');
  }, 120_000);

  it('re-synthesizes and restarts the stage on an infra change: same port, an empty store, functions rebuilt on the new stage', async () => {
    const before = { api: watching.api, url: watching.api.url, reports: reports.length, starts, resyntheses };
    const savedAt = performance.now();
    writeFileSync(join(copy, STAGE_APP.infraSource, 'note.ts'), '// an infra change\n');
    await until('the infra reload line', () => reports.length > before.reports);
    console.log(
      `start:deployed --watch: infra change save to reload line ${Math.round(reportedAt[before.reports]! - savedAt)} ms; ${reports[before.reports]}`,
    );

    expect(reports.slice(before.reports)).toEqual([
      expect.stringMatching(
        /^reload: infra\/note\.ts changed; re-synthesized and restarted PetStore-staging on http:\/\/\S+ in \d+ ms \(its store starts empty\)$/,
      ),
    ]);
    expect(reports[before.reports]).toContain(` on ${before.url} in `);
    expect({ resyntheses: resyntheses - before.resyntheses, starts: starts - before.starts }).toEqual({
      resyntheses: 1,
      starts: 1,
    });
    expect(watching.api).not.toBe(before.api);
    expect(watching.api.url).toBe(before.url);

    // The new stage's store is empty: the old key is refused, one issued on it is served. (Issued
    // first: the authorizer keeps the keys it read, empty ones included, for a while.)
    const key = await issueKey('staging', watching.api);
    restartedStageKey = key;
    expect((await get(MISSING_ID, keys[0]!)).status).toBe(401);
    const answer = await get(MISSING_ID, key);
    expect(answer.status).toBe(404);
    expect(answer.headers.get('x-request-id')).toBeTruthy();

    // The new stage's functions are watched: an edit is rebuilt and served on it.
    const third = '`Pet ${petId}: none in the inventory.`';
    editGetPet(NEW_TEMPLATE, third);
    const served = async () =>
      (await get(MISSING_ID, key)).body.message === `Pet ${MISSING_ID}: none in the inventory.`;
    await until('the edit served on the restarted stage', served, true);
    expect(reports.slice(before.reports + 1)).toEqual([expect.stringMatching(rebuiltGetPet())]);
  }, 120_000);

  it('serves every edit, saved in place, by rename over and by delete and create, one after another', async () => {
    const key = restartedStageKey!;
    expect(key, 'the infra test issued a key on the restarted stage').toBeDefined();
    const file = join(copy, 'functions', 'getPet.ts');
    const first = /`[^`]*\$\{petId\}[^`]*`/.exec(readFileSync(file, 'utf8'))![0];
    const nextTemplate = (how: string, round: number) => `\`Pet \${petId} is not in the inventory (${how} ${round}).\``;
    const timings = await saveEveryWay(file, first, nextTemplate, async (template, label) => {
      const served = async () =>
        (await get(MISSING_ID, key)).body.message === template.slice(1, -1).replace('${petId}', String(MISSING_ID));
      await until(`the answer after save ${label}`, served, true);
    });
    console.log(`start:deployed --watch, save to new answer: ${timings.join('; ')}`);
  }, 180_000);

  it('keeps the old code serving through a syntax error, says its file, line and column in one line, and reloads on the fix', async () => {
    const key = restartedStageKey!;
    const before = (await get(MISSING_ID, key)).body.message;
    const file = join(copy, 'lib', 'http', 'responses.ts');
    const source = readFileSync(file, 'utf8');
    // The lines about this file only: the last save of the test before may still be reporting.
    const aboutIt = () => reports.filter((line) => line.startsWith('reload: lib/http/responses.ts changed;'));
    writeFileSync(file, `${source}const broken = ;\n`);
    await until('the build failure line', () => aboutIt().length > 0);
    const brokenLine = source.split('\n').length;
    expect(aboutIt()).toEqual([
      expect.stringMatching(
        new RegExp(
          `^reload: lib/http/responses\\.ts changed; the build failed, the old code still runs \\(\\d+ ms\\): \\S*lib/http/responses\\.ts:${brokenLine}:\\d+: .+$`,
        ),
      ),
    ]);
    expect((await get(MISSING_ID, key)).body.message).toBe(before);
    writeFileSync(file, source);
    // One save may be seen as two changes (the truncation, then the write): the broken one may be
    // reported again before the fix is; every line before the rebuild is that failure.
    const rebuilt = (line: string) => /^reload: lib\/http\/responses\.ts changed; rebuilt /.test(line);
    await until('the reload after the fix', () => aboutIt().some(rebuilt));
    const lines = aboutIt();
    expect(lines.slice(0, lines.findIndex(rebuilt)).every((line) => line.includes(`responses.ts:${brokenLine}:`))).toBe(
      true,
    );
    expect((await get(MISSING_ID, key)).body.message).toBe(before);
  }, 120_000);
});
