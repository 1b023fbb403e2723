/**
 * watchSettled, the change bursts `npm run dev` and `start:deployed --watch` reload on: a save by
 * delete and create is handed on once the file is back, even when the create comes later than the
 * settling time (a loaded machine), so no reload builds without it.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { watchSettled } from '@petstore/local-kit/folderWatch';

/** The bursts handed on, and `next()`: the burst after those seen so far (10 s at most: a safety timeout). */
function recorded() {
  const bursts: string[][] = [];
  const waiting: Array<() => void> = [];
  const onBurst = async (files: string[]) => {
    bursts.push(files);
    for (const wake of waiting.splice(0)) wake();
  };
  const next = (seen: number) =>
    new Promise<void>((resolve, reject) => {
      if (bursts.length > seen) return resolve();
      // A safety timeout: fails the wait when the burst never comes.
      const timer = setTimeout(() => reject(new Error(`no burst ${seen + 1} within 10 s`)), 10_000);
      waiting.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  return { bursts, onBurst, next };
}

it('hands on a file deleted and created again 100 ms later with the file there, never while it is missing', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'petstore-watch-'));
  const file = join(folder, 'handler.ts');
  const marker = join(folder, 'marker.ts');
  writeFileSync(file, 'export const a = 1;\n');
  const { bursts, onBurst, next } = recorded();
  const present: boolean[] = [];
  const watch = watchSettled([folder], async (files) => {
    present.push(files.every((changed) => existsSync(changed)));
    await onBurst(files);
  });
  try {
    rmSync(file);
    // The gap is the scenario (a create later than the 25 ms settling, as under load), not an ordering.
    await new Promise((resolve) => setTimeout(resolve, 100));
    writeFileSync(file, 'export const a = 2;\n');
    await next(0);
    // A later change, waited for: every burst until it came with every file it names there.
    writeFileSync(marker, 'export const b = 1;\n');
    while (!bursts.some((files) => files.includes(marker))) await next(bursts.length);
    expect(bursts[0]).toEqual([file]);
    // A loaded machine may deliver the write's own event after the first burst settled: the file is
    // handed on again (a second rebuild of the same code), never while it is missing.
    expect(present.every(Boolean)).toBe(true);
  } finally {
    await watch.close();
    rmSync(folder, { recursive: true, force: true });
  }
});

it('hands on a file deleted for good once the wait for it is over', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'petstore-watch-'));
  const file = join(folder, 'handler.ts');
  writeFileSync(file, 'export const a = 1;\n');
  const { bursts, onBurst, next } = recorded();
  const watch = watchSettled([folder], onBurst);
  try {
    rmSync(file);
    await next(0);
    expect(bursts).toEqual([[file]]);
  } finally {
    await watch.close();
    rmSync(folder, { recursive: true, force: true });
  }
});
