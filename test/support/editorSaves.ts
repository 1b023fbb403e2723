/** The ways editors save a file, for the watch tests: each must be seen, every time. */
import { readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { expect } from 'vitest';

const EDITOR_SAVES: Readonly<Record<string, (file: string, text: string) => void>> = {
  'in place': (file, text) => writeFileSync(file, text),
  // vim, JetBrains' safe write, sed -i: a new file renamed over the old, so the old inode is gone.
  'rename over': (file, text) => {
    writeFileSync(`${file}.tmp`, text);
    renameSync(`${file}.tmp`, file);
  },
  'delete and create': (file, text) => {
    unlinkSync(file);
    writeFileSync(file, text);
  },
};

/**
 * Edits `file` every way EDITOR_SAVES knows, one after another (`rounds` times each; once is the
 * watch's whole subject: each way's events, and a save right after a reload): each save replaces the
 * template before it (`firstTemplate`, then the last `nextTemplate`), which must be in the file, and
 * `served` resolves once the new template is answered. The time from each save to its answer, as
 * `<how> <round>: <ms> ms`.
 */
export async function saveEveryWay(
  file: string,
  firstTemplate: string,
  nextTemplate: (how: string, round: number) => string,
  served: (template: string, label: string) => Promise<void>,
  rounds = 1,
): Promise<string[]> {
  let template = firstTemplate;
  const timings: string[] = [];
  for (const [how, save] of Object.entries(EDITOR_SAVES)) {
    for (let round = 1; round <= rounds; round++) {
      const next = nextTemplate(how, round);
      const source = readFileSync(file, 'utf8');
      expect(source).toContain(template);
      const savedAt = performance.now();
      save(file, source.replace(template, next));
      template = next;
      await served(next, `${how} ${round}`);
      timings.push(`${how} ${round}: ${Math.round(performance.now() - savedAt)} ms`);
    }
  }
  return timings;
}
