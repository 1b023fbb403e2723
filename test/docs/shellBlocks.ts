/**
 * The shell blocks of the README, the client's README and docs/, each with the line before it: the mark that says which
 * test runs its commands, or why none can here. Read by test/docs/commands.test.ts (every block is
 * marked) and test/docs/walkthrough.test.ts (runs the blocks marked as run as written).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '../..');
const DOCUMENTED_FILES = [
  'README.md',
  'client/README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];
/** `<!-- run by: tests -->`, `<!-- run as written by: test -->` or `<!-- not run here: why -->`. */
export const MARK = /^<!-- (run by|run as written by|not run here): (.+) -->$/;

export interface ShellBlock {
  where: string;
  mark: string | undefined;
  /** The block's source, line continuations joined. */
  body: string;
  /** Its commands, comments and blank lines dropped. */
  commands: string[];
}

/** Every ```sh or ```bash block of a file, with the line before it (blank lines skipped) and its commands. */
function shellBlocks(file: string): ShellBlock[] {
  const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
  const blocks: ShellBlock[] = [];
  for (let at = 0; at < lines.length; at++) {
    const fence = /^\s*```(\w*)\s*$/.exec(lines[at]!);
    if (!fence) continue;
    let end = at + 1;
    while (end < lines.length && !/^\s*```\s*$/.test(lines[end]!)) end++;
    if (fence[1] === 'sh' || fence[1] === 'bash') {
      let before = at - 1;
      while (before >= 0 && lines[before]!.trim() === '') before--;
      const body = lines
        .slice(at + 1, end)
        .join('\n')
        .replace(/\\\n\s*/g, ' ');
      const commands = body
        .split('\n')
        .map((line) => line.replace(/(^|\s+)#.*$/, '').trim())
        .filter(Boolean);
      blocks.push({
        where: `${file}:${at + 1}`,
        mark: before >= 0 ? lines[before]!.trim() : undefined,
        body,
        commands,
      });
    }
    at = end;
  }
  return blocks;
}

export const documentedBlocks = (): ShellBlock[] => DOCUMENTED_FILES.flatMap(shellBlocks);
