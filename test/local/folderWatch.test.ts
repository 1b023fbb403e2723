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

const until = async (what: string, done: () => boolean) => {
  for (const deadline = Date.now() + 10_000; !done(); await new Promise((resolve) => setTimeout(resolve, 10))) {
    if (Date.now() > deadline) throw new Error(`${what}: not within 10 s`);
  }
};

it('hands on a file deleted and created again 100 ms later once, with the file there', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'petstore-watch-'));
  const file = join(folder, 'handler.ts');
  writeFileSync(file, 'export const a = 1;\n');
  const bursts: { files: string[]; present: boolean }[] = [];
  const watch = watchSettled(
    [folder],
    async (files) => void bursts.push({ files, present: files.every((changed) => existsSync(changed)) }),
  );
  try {
    rmSync(file);
    await new Promise((resolve) => setTimeout(resolve, 100));
    writeFileSync(file, 'export const a = 2;\n');
    await until('a burst', () => bursts.length > 0);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(bursts).toEqual([{ files: [file], present: true }]);
  } finally {
    await watch.close();
    rmSync(folder, { recursive: true, force: true });
  }
});

it('hands on a file deleted for good once the wait for it is over', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'petstore-watch-'));
  const file = join(folder, 'handler.ts');
  writeFileSync(file, 'export const a = 1;\n');
  const bursts: string[][] = [];
  const watch = watchSettled([folder], async (files) => void bursts.push(files));
  try {
    rmSync(file);
    await until('the burst of the deletion', () => bursts.length > 0);
    expect(bursts).toEqual([[file]]);
  } finally {
    await watch.close();
    rmSync(folder, { recursive: true, force: true });
  }
});
