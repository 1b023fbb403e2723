/**
 * The debugger's pauses of an inspected sandbox (`start:deployed --inspect`), for the function's
 * timeout to stop while it is paused. lambdaRuntime.mjs runs this module as a worker thread, which
 * watches the main thread through a `connectToMainThread` inspector session (a paused main thread can
 * neither send IPC nor read a postMessage; the worker still runs) and
 * - writes `paused` / `resumed` lines to the fd the host opened for them (sandbox.ts stops and
 *   restarts its timeout on them);
 * - keeps the time spent paused in shared memory, which the main thread reads synchronously
 *   (`pausedMs`) for `context.getRemainingTimeInMillis()`.
 */
import { writeSync } from 'node:fs';
import { Session } from 'node:inspector';
import { parentPort, workerData } from 'node:worker_threads';

/** Slots of the shared BigInt64Array: a seqlock's version (odd while written), then the two values. */
export const PAUSE_SLOTS = { version: 0, totalPausedMs: 1, pausedSince: 2, count: 3 };

/** The main thread's read: milliseconds spent paused so far, a pause in progress counted up to now. */
export function pausedMs(slots) {
  for (;;) {
    const before = Atomics.load(slots, PAUSE_SLOTS.version);
    const total = Atomics.load(slots, PAUSE_SLOTS.totalPausedMs);
    const since = Atomics.load(slots, PAUSE_SLOTS.pausedSince);
    if (before % 2n === 0n && Atomics.load(slots, PAUSE_SLOTS.version) === before) {
      return Number(total) + (since ? Date.now() - Number(since) : 0);
    }
  }
}

if (parentPort) watch(workerData.fd, workerData.pauses);

function watch(fd, pauses) {
  // Under a seqlock, so the main thread never reads half an update.
  const update = (totalPausedMs, pausedSince) => {
    Atomics.add(pauses, PAUSE_SLOTS.version, 1n);
    Atomics.store(pauses, PAUSE_SLOTS.totalPausedMs, totalPausedMs);
    Atomics.store(pauses, PAUSE_SLOTS.pausedSince, pausedSince);
    Atomics.add(pauses, PAUSE_SLOTS.version, 1n);
  };
  const session = new Session();
  session.connectToMainThread();
  session.on('Debugger.paused', () => {
    update(Atomics.load(pauses, PAUSE_SLOTS.totalPausedMs), BigInt(Date.now()));
    writeSync(fd, 'paused\n');
  });
  session.on('Debugger.resumed', () => {
    const since = Atomics.load(pauses, PAUSE_SLOTS.pausedSince);
    update(Atomics.load(pauses, PAUSE_SLOTS.totalPausedMs) + (since ? BigInt(Date.now()) - since : 0n), 0n);
    writeSync(fd, 'resumed\n');
  });
  session.post('Debugger.enable', () => {
    // An enabled session alone would make a `debugger;` statement pause the sandbox with no debugger
    // attached; V8 breaks only while some session has breakpoints active, so this one turns its own off.
    session.post('Debugger.setBreakpointsActive', { active: false }, () => parentPort.postMessage('watching'));
  });
  // Nothing else keeps this thread's loop alive; the runtime unrefs the worker, so the sandbox still exits.
  setInterval(() => undefined, 2 ** 31 - 1);
}
