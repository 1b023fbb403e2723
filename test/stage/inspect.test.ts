/**
 * start:deployed --inspect: a debugger attached over the inspector protocol (WebSocket to the
 * sandbox's /json/list URL) stops at a breakpoint set by TypeScript file and line, found through
 * the bundle's source map, and may keep it paused past the function's timeout: the clock stops
 * while it is paused, and only then. Needs a global WebSocket: Node 22 has it, Node 20 behind the
 * flag vitest.config.ts passes it.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { SourceMap } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BUNDLE_FILE, PROJECT_ROOT } from '../../infra/bundle/bundling.ts';
import { stackName } from '../../infra/stages.ts';
import { readStack } from '../../tools/stage-emulator/src/cloudAssembly.ts';
import { startDeployedApi, type DeployedApi } from '../../tools/stage-emulator/src/deployedApi.ts';
import { ensureCloudAssembly } from '../../tools/stage-emulator/src/freshAssembly.ts';
import { LambdaFunctionHost } from '../../tools/stage-emulator/src/lambdaHost.ts';
import { API_KEY_FORMAT, runKeys } from '../../tools/keys/keys.ts';
import { freePort } from '../support/ports.ts';
import { fixtureFunction } from '../support/lambdaFixture.ts';
import { DEFAULT_OUTDIR, EDGE_ERRORS, OFFLINE_PARAMETERS, STAGE_APP } from '../../local/stageApp.ts';

const SOURCE = 'functions/listPets.ts';
/** listPets' Timeout in this test's copy of the template: short, so a pause can outlast it. */
const TIMEOUT_SECONDS = 2;
let api: DeployedApi;
let port: number;
let key: string;
const logs: string[] = [];
const logListeners = new Set<() => void>();
/** Resolves once a line including `text` is logged; fails after 5 s (a safety timeout). */
const logged = (text: string) =>
  new Promise<void>((resolve, reject) => {
    const check = () => {
      if (!logs.some((line) => line.includes(text))) return;
      logListeners.delete(check);
      clearTimeout(timer);
      resolve();
    };
    // A safety timeout: fails the wait when the line never comes.
    const timer = setTimeout(() => {
      logListeners.delete(check);
      reject(new Error(`no "${text}" line within 5 s`));
    }, 5_000);
    logListeners.add(check);
    check();
  });

/** Staging's template with listPets' Timeout cut to TIMEOUT_SECONDS. */
function stagingWithAShortTimeout() {
  const template = structuredClone(readStack(DEFAULT_OUTDIR, stackName('staging')).template);
  const [, listPets] = Object.entries(template.Resources).find(
    ([id, r]) => r.Type === 'AWS::Lambda::Function' && id.startsWith('ListPets'),
  )!;
  listPets.Properties!.Timeout = TIMEOUT_SECONDS;
  return template;
}

beforeAll(async () => {
  await ensureCloudAssembly(DEFAULT_OUTDIR, STAGE_APP);
  port = await freePort();
  api = await startDeployedApi({
    stackName: stackName('staging'),
    outdir: DEFAULT_OUTDIR,
    app: STAGE_APP,
    edgeErrors: EDGE_ERRORS,
    template: stagingWithAShortTimeout(),
    port: 0,
    parameters: { ...OFFLINE_PARAMETERS },
    inspect: { name: 'listPets', port },
    log: (line) => {
      logs.push(line);
      for (const listener of [...logListeners]) listener();
    },
    report: () => undefined,
  });
  const lines: string[] = [];
  await runKeys(
    ['create', '--stage', 'staging', '--table', api.output('ControlTableName'), '--endpoint', api.storeEndpoint],
    {
      out: (l) => lines.push(l),
      err: (l) => lines.push(l),
    },
  );
  key = lines.map((l) => l.trim()).find((l) => API_KEY_FORMAT.test(l))!;
}, 300_000);
afterAll(async () => api?.close());

const listPets = () => fetch(`${api.url}/pets`, { headers: { Authorization: `Bearer ${key}` } });
/**
 * A sandbox started and answering: a cold start under the inspector on a busy machine can outlast
 * the function's 2 s timeout (a 504), and the sandbox that follows it is warm.
 */
async function warmSandbox(): Promise<number> {
  let status = 0;
  for (let attempt = 0; attempt < 3 && status !== 200; attempt++) status = (await listPets()).status;
  return status;
}

/** The bundle line and column a TypeScript line maps to, through the bundle's own source map. */
function generatedPosition(bundle: string, sourceLine: number) {
  const map = new SourceMap(JSON.parse(readFileSync(`${bundle}.map`, 'utf8')));
  const lines = readFileSync(bundle, 'utf8').split('\n');
  for (let line = 0; line < lines.length; line++) {
    const column = lines[line]!.search(/\S/);
    if (column < 0) continue;
    const entry = map.findEntry(line, column) as { originalSource?: string; originalLine?: number };
    if (entry.originalSource?.endsWith(SOURCE) && entry.originalLine === sourceLine) return { map, line, column };
  }
  throw new Error(`no bundle line maps to ${SOURCE}:${sourceLine + 1}`);
}

/** The inspected listPets bundle (its sandbox's LAMBDA_TASK_ROOT/index.js). */
const inspectedBundle = () =>
  join(PROJECT_ROOT, '.inspect', api.functions.find((f) => f.logicalId.startsWith('ListPets'))!.logicalId, BUNDLE_FILE);

interface PausedAt {
  callFrames: { location: { lineNumber: number; columnNumber: number } }[];
}

/** A debugger on the sandbox's inspector (what VS Code or Chrome does), with one breakpoint set. */
async function attachWithBreakpoint(bundle: string, line: number, column: number) {
  const [target] = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as {
    webSocketDebuggerUrl: string;
  }[];
  const socket = new WebSocket(target!.webSocketDebuggerUrl);
  await new Promise((resolve) => socket.addEventListener('open', resolve, { once: true }));
  let id = 0;
  const answered = new Map<number, () => void>();
  const paused = new Promise<PausedAt>((resolve) =>
    socket.addEventListener('message', (message) => {
      const data = JSON.parse(String(message.data));
      if (data.method === 'Debugger.paused') resolve(data.params);
      if (typeof data.id === 'number') answered.get(data.id)?.();
    }),
  );
  /** Sends a command; resolves once the inspector has answered it. */
  const send = (method: string, params: object = {}) =>
    new Promise<void>((resolve) => {
      answered.set(++id, resolve);
      socket.send(JSON.stringify({ id, method, params }));
    });
  void send('Debugger.enable');
  await send('Debugger.setBreakpointByUrl', {
    url: pathToFileURL(bundle).href,
    lineNumber: line,
    columnNumber: column,
  });
  return { paused, resume: () => send('Debugger.resume'), close: () => socket.close() };
}

it('stops at a breakpoint set in functions/listPets.ts, then resumes and answers', async () => {
  expect(await warmSandbox()).toBe(200); // starts the sandbox, under the inspector
  const bundle = inspectedBundle();
  // Zero-based, as the protocol counts: the handler's first statement.
  const sourceLine = readFileSync(join(PROJECT_ROOT, SOURCE), 'utf8')
    .split('\n')
    .findIndex((l) => l.includes('parseOrThrow(ListPetsQuery'));
  const { map, line, column } = generatedPosition(bundle, sourceLine);
  const debug = await attachWithBreakpoint(bundle, line, column);

  const answer = listPets();
  const stop = await debug.paused;
  const at = map.findEntry(stop.callFrames[0]!.location.lineNumber, stop.callFrames[0]!.location.columnNumber) as {
    originalSource: string;
    originalLine: number;
  };
  expect(fileURLToPath(new URL(at.originalSource, pathToFileURL(bundle)))).toBe(join(PROJECT_ROOT, SOURCE));
  expect(at.originalLine).toBe(sourceLine);
  debug.resume();
  expect((await answer).status).toBe(200);
  debug.close();
}, 60_000);

// Paused where the pipeline is about to read context.getRemainingTimeInMillis() (lib/http/pipeline.ts):
// neither the runner's timeout nor the remaining time the function is told may count the pause. (A
// pause after that line outlasts the store deadline the function set itself, on its own clock.)
it("paused longer than the function's timeout, it still answers: the timeout stops while paused, with one line each way", async () => {
  expect(await warmSandbox()).toBe(200);
  logs.length = 0;
  const bundle = inspectedBundle();
  const lines = readFileSync(bundle, 'utf8').split('\n');
  const line = lines.findIndex((l) => l.includes('requestDeadline(Date.now(), context.getRemainingTimeInMillis'));
  expect(line, 'the line of lib/http/pipeline.ts that reads the remaining time').toBeGreaterThanOrEqual(0);
  const debug = await attachWithBreakpoint(bundle, line, lines[line]!.search(/\S/));

  const answer = listPets();
  await debug.paused;
  // The pause's length is the subject: the sandbox's own clock, in its process, runs past the timeout.
  await new Promise((resolve) => setTimeout(resolve, TIMEOUT_SECONDS * 1000 + 1_500));
  debug.resume();
  const reply = await answer;
  expect(reply.status, await reply.clone().text()).toBe(200);
  expect(logs.filter((l) => l.includes('Task timed out'))).toEqual([]);
  // The resume is reported on its own pipe, which the host may read after the answer.
  await logged('Timeout resumed');
  expect(logs.filter((l) => /Timeout (suspended|resumed)/.test(l))).toEqual([
    expect.stringMatching(
      new RegExp(
        `Timeout suspended: the debugger paused the sandbox \\(\\d\\.\\d\\d s of ${TIMEOUT_SECONDS}\\.00 s left\\)$`,
      ),
    ),
    expect.stringMatching(
      new RegExp(
        `Timeout resumed: the debugger resumed the sandbox \\(\\d\\.\\d\\d s of ${TIMEOUT_SECONDS}\\.00 s left\\)$`,
      ),
    ),
  ]);
  debug.close();
}, 60_000);

/** A fixture function's host under the inspector, with a 1 s timeout. */
function inspectedFixture(source: string, lines: string[], inspectPort: number) {
  const assetDir = mkdtempSync(join(tmpdir(), 'inspect-fixture-'));
  writeFileSync(join(assetDir, 'index.mjs'), source);
  const host = new LambdaFunctionHost(
    fixtureFunction('inspect-fixture', assetDir, { timeoutSeconds: 1, inspectPort, log: (line) => lines.push(line) }),
  );
  const close = async () => {
    await host.close();
    rmSync(assetDir, { recursive: true, force: true });
  };
  return { host, close };
}

it("an inspected sandbox that runs past its timeout without a pause is killed with Lambda's message", async () => {
  const lines: string[] = [];
  const fixture = inspectedFixture(
    // Its own work outlasts the timeout.
    'export const handler = async () => { await new Promise((r) => setTimeout(r, 5_000)); return "late"; };',
    lines,
    await freePort(),
  );
  try {
    const started = Date.now();
    expect(await fixture.host.invoke({})).toEqual({
      kind: 'timeout',
      errorMessage: 'Task timed out after 1.00 seconds',
    });
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(lines).toContainEqual(expect.stringMatching(/ Task timed out after 1\.00 seconds$/));
    expect(lines.filter((line) => line.startsWith('Timeout '))).toEqual([]);
  } finally {
    await fixture.close();
  }
}, 30_000);

it('with no debugger attached, a `debugger;` statement does not pause the sandbox (the runner watches pauses, it makes none)', async () => {
  const lines: string[] = [];
  const fixture = inspectedFixture(
    'export const handler = async () => { debugger; return "past it"; };',
    lines,
    await freePort(),
  );
  try {
    // A safety timeout: a sandbox still paused at it has failed.
    const stuck = new Promise((resolve) => setTimeout(() => resolve('still paused after 5 s'), 5_000).unref());
    expect(await Promise.race([fixture.host.invoke({}), stuck])).toEqual({ kind: 'ok', payload: 'past it' });
    expect(lines.filter((line) => line.startsWith('Timeout '))).toEqual([]);
  } finally {
    await fixture.close();
  }
}, 30_000);
