/**
 * watchSettled, the change bursts `npm run dev` and `start:deployed --watch` reload on: a save by
 * delete and create is handed on once the file is back, even when the create comes later than the
 * settling time (a loaded machine), so no reload builds without it.
 */
import { existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
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

it('hands on a file deleted and put back 100 ms later once, with the file there', async () => {
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
    // Put back whole, by a rename from outside the folder: one event, however late a loaded machine
    // delivers a write's second one (the create's and the write's may otherwise settle apart).
    const replacement = join(mkdtempSync(join(tmpdir(), 'petstore-watch-new-')), 'handler.ts');
    writeFileSync(replacement, 'export const a = 2;\n');
    renameSync(replacement, file);
    await next(0);
    // A later change, waited for: a second burst of the save would come before it or with it.
    writeFileSync(marker, 'export const b = 1;\n');
    await next(1);
    expect(bursts).toEqual([[file], [marker]]);
    expect(present).toEqual([true, true]);
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
