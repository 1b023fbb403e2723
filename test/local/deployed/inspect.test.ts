/**
 * start:deployed --inspect: a debugger attached over the inspector protocol (WebSocket to the
 * sandbox's /json/list URL) stops at a breakpoint set by TypeScript file and line, found through
 * the bundle's source map. Needs a global WebSocket: Node 22 has it, Node 20 behind the flag
 * vitest.config.ts passes it.
 */
import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../infra/bundling.ts';
import { stackName } from '../../../infra/stages.ts';
import { startDeployedApi, type DeployedApi } from '../../../local/deployed/deployedApi.ts';
import { DEFAULT_OUTDIR, ensureCloudAssembly } from '../../../local/deployed/freshAssembly.ts';
import { API_KEY_FORMAT, runKeys } from '../../../scripts/keys.ts';
import { OFFLINE_PARAMETERS } from '../../../scripts/startDeployed.ts';
import { freePort } from '../../support/ports.ts';

const SOURCE = 'functions/listPets.ts';
let api: DeployedApi;
let port: number;
let key: string;


beforeAll(async () => {
  await ensureCloudAssembly(DEFAULT_OUTDIR);
  port = await freePort();
  api = await startDeployedApi({
    stackName: stackName('staging'),
    outdir: DEFAULT_OUTDIR,
    port: 0,
    parameters: { ...OFFLINE_PARAMETERS },
    inspect: { name: 'listPets', port },
    log: () => undefined,
    report: () => undefined,
  });
  const lines: string[] = [];
  await runKeys(['create', '--stage', 'staging', '--table', api.controlTableName, '--endpoint', api.storeEndpoint], { out: (l) => lines.push(l), err: (l) => lines.push(l) });
  key = lines.map((l) => l.trim()).find((l) => API_KEY_FORMAT.test(l))!;
}, 300_000);
afterAll(async () => api?.close());

const listPets = () => fetch(`${api.url}/pets`, { headers: { Authorization: `Bearer ${key}` } });

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

it('stops at a breakpoint set in functions/listPets.ts, then resumes and answers', async () => {
  expect((await listPets()).status).toBe(200); // starts the sandbox, under the inspector
  const bundle = join(PROJECT_ROOT, '.inspect', api.functions.find((f) => f.logicalId.startsWith('ListPets'))!.logicalId, 'index.mjs');
  // Zero-based, as the protocol counts: the handler's first statement.
  const sourceLine = readFileSync(join(PROJECT_ROOT, SOURCE), 'utf8').split('\n').findIndex((l) => l.includes('parseOrThrow(ListPetsQuery'));
  const { map, line, column } = generatedPosition(bundle, sourceLine);

  const [target] = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as { webSocketDebuggerUrl: string }[];
  const socket = new WebSocket(target!.webSocketDebuggerUrl);
  await new Promise((resolve) => socket.addEventListener('open', resolve, { once: true }));
  let id = 0;
  const paused = new Promise<{ callFrames: { location: { lineNumber: number; columnNumber: number } }[] }>((resolve) =>
    socket.addEventListener('message', (message) => {
      const data = JSON.parse(String(message.data));
      if (data.method === 'Debugger.paused') resolve(data.params);
    }),
  );
  const send = (method: string, params: object = {}) => socket.send(JSON.stringify({ id: ++id, method, params }));
  send('Debugger.enable');
  send('Debugger.setBreakpointByUrl', { url: pathToFileURL(bundle).href, lineNumber: line, columnNumber: column });
  await new Promise((resolve) => setTimeout(resolve, 200));

  const answer = listPets();
  const stop = await paused;
  const at = map.findEntry(stop.callFrames[0]!.location.lineNumber, stop.callFrames[0]!.location.columnNumber) as { originalSource: string; originalLine: number };
  expect(fileURLToPath(new URL(at.originalSource, pathToFileURL(bundle)))).toBe(join(PROJECT_ROOT, SOURCE));
  expect(at.originalLine).toBe(sourceLine);
  send('Debugger.resume');
  expect((await answer).status).toBe(200);
  socket.close();
}, 60_000);
