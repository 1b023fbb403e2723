/**
 * A terminal's Ctrl-C: SIGINT to the whole process group of `npm start` (npm, the local API and its
 * store's process), during traffic. It is a clean stop, like SIGTERM to the local API alone: no
 * store fault said, no fault marker left, a checkpoint written, exit 0; the next start repairs
 * nothing and has every pet acknowledged.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Pet } from '../../lib/domain/schemas.ts';
import { commandEnvironment } from '../support/cli.ts';
import { startServer, stopCleanly } from '../support/serverProcess.ts';

const KEY = 'ctrl-c-test-key-0123456789';
const headers = { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' };
const ROUNDS = 5;
const CLIENTS = 4;
/** Creates acknowledged before the Ctrl-C of a round: the traffic is under way. */
const BEFORE_SIGNAL = 20;
/**
 * The target is under 1 s; asserted generously (the 1.5 s stop deadline, after which the
 * local API exits 1), so that a loaded machine does not fail it: the figures are printed.
 */
const STOP_BOUND_MS = 1_500;

const groups: number[] = [];
afterEach(() => {
  // A failed round must not leave a server behind.
  for (const group of groups.splice(0))
    try {
      process.kill(-group, 'SIGKILL');
    } catch {
      // already gone
    }
});

/** `npm start` in a process group of its own, as a terminal runs it; resolves once it has printed its start lines. */
async function startInGroup(env: Record<string, string>) {
  const npm = spawn('npm', ['start'], {
    env: commandEnvironment({ PORT: '0', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  groups.push(npm.pid as number);
  let stdout = '';
  let stderr = '';
  npm.stderr.on('data', (chunk) => (stderr += String(chunk)));
  const exited = new Promise<{ code: number | null; at: number }>((resolve) =>
    npm.once('exit', (code) => resolve({ code, at: Date.now() })),
  );
  const base = await new Promise<string>((resolve, reject) => {
    npm.stdout.on('data', (chunk) => {
      stdout += String(chunk);
      const found = /listening on (\S+)/.exec(stdout)?.[1];
      if (found && stdout.includes('\nDocs:')) resolve(found);
    });
    void exited.then(() => reject(new Error(`npm start ended before its start lines:\n${stdout}\n${stderr}`)));
  });
  return { group: npm.pid as number, base, exited, stderr: () => stderr };
}

/** Clients creating pets one after another until the server stops answering: the pets acknowledged, and any other answer. */
function traffic(base: string, onAcknowledged: (count: number) => void) {
  const acknowledged: Pet[] = [];
  const otherAnswers: string[] = [];
  const client = async (c: number) => {
    for (let n = 0; ; n++) {
      let res: Response;
      try {
        res = await fetch(`${base}/pets`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ name: `Client ${c} pet ${n}`, categoryId: 1 }),
        });
      } catch {
        return; // refused or closed: the server is stopping
      }
      if (res.status !== 201) {
        otherAnswers.push(`${res.status} ${await res.text()}`);
        continue;
      }
      acknowledged.push((await res.json()) as Pet);
      onAcknowledged(acknowledged.length);
    }
  };
  const done = Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
  return { acknowledged, otherAnswers, done };
}

describe('Ctrl-C (SIGINT to the process group) during traffic', () => {
  it(`is a clean stop: no fault, no marker, exit 0; the next start repairs nothing, ${ROUNDS} of ${ROUNDS}`, {
    timeout: 180_000,
  }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'petstore-ctrl-c-'));
    const env = { PETSTORE_DATA_DIR: dataDir, PETSTORE_API_KEYS: KEY };
    const stopTimes: number[] = [];
    const failures: string[] = [];
    const acknowledged: Pet[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const api = await startInGroup(env);
      let underWay = () => {};
      const trafficUnderWay = new Promise<void>((resolve) => (underWay = resolve));
      const clients = traffic(api.base, (count) => count >= BEFORE_SIGNAL && underWay());
      await trafficUnderWay;
      const signalled = Date.now();
      process.kill(-api.group, 'SIGINT');
      const { code, at } = await api.exited;
      await clients.done;
      stopTimes.push(at - signalled);
      acknowledged.push(...clients.acknowledged);
      const problems = [
        ...(code === 0 ? [] : [`exit ${code}`]),
        ...(at - signalled > STOP_BOUND_MS ? [`stopped after ${at - signalled} ms`] : []),
        ...(api.stderr() === '' ? [] : [`said ${JSON.stringify(api.stderr())}`]),
        ...clients.otherAnswers.map((answer) => `answered ${answer.slice(0, 120)}`),
        ...(existsSync(join(dataDir, 'store-faulted')) ? ['left the fault marker'] : []),
        ...(existsSync(join(dataDir, 'checkpoint')) ? [] : ['wrote no checkpoint']),
        ...(existsSync(join(dataDir, 'endpoint')) ? ['left its endpoint record (an unclean stop)'] : []),
      ];
      failures.push(...problems.map((problem) => `round ${round}: ${problem}`));
    }
    console.log(`Ctrl-C stop times (ms), signal to npm's exit: ${stopTimes.join(', ')}`);

    // The next start has nothing to repair and has every pet acknowledged.
    const next = await startServer(env);
    for (const pet of acknowledged) {
      const res = await fetch(`${next.base}/pets/${pet.id}`, { headers });
      if (res.status !== 200) failures.push(`pet ${pet.id} acknowledged, then answered ${res.status}`);
      else expect(await res.json()).toEqual(pet);
    }
    await stopCleanly(next);
    if (next.stderr() !== '') failures.push(`the next start said ${JSON.stringify(next.stderr())}`);
    expect(failures).toEqual([]);
  });
});
