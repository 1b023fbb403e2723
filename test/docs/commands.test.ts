/**
 * Every shell block of the README and docs/ says, on the line before it, whether a test runs its
 * commands (`<!-- run by: test/a.test.ts, test/b.test.ts -->`) or why none can here
 * (`<!-- not run here: needs an AWS account -->`). A block "run by" named tests holds only npm
 * scripts, and each named script's entry file and first argument appear in one of those tests.
 * A new block with neither mark fails, so does a "run by" that names a test which does not run it.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const FILES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];
const SCRIPTS = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
const MARK = /^<!-- (run by|not run here): (.+) -->$/;

interface ShellBlock {
  where: string;
  mark: string | undefined;
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
      const body = lines.slice(at + 1, end).join('\n').replace(/\\\n\s*/g, ' ');
      const commands = body
        .split('\n')
        .map((line) => line.replace(/(^|\s+)#.*$/, '').trim())
        .filter(Boolean);
      blocks.push({ where: `${file}:${at + 1}`, mark: before >= 0 ? lines[before]!.trim() : undefined, commands });
    }
    at = end;
  }
  return blocks;
}

/** What a test must mention to run `command`: the npm script's entry file and its first argument. */
function signature(command: string): string[] | undefined {
  const words = command.replace(/^(\w+=\S*\s+)+/, '').split(/\s+/);
  const script = words[0] === 'npm' && words[1] === 'run' ? words[2] : words[0] === 'npm' && words[1] === 'start' ? 'start' : undefined;
  const entry = script && SCRIPTS[script]?.split(/\s+/).find((word) => /\.(ts|mjs)$/.test(word));
  if (!entry) return undefined;
  const dashes = words.indexOf('--');
  const firstArgument = dashes < 0 ? undefined : words[dashes + 1];
  return firstArgument ? [entry, `'${firstArgument}'`] : [entry];
}

const BLOCKS = FILES.flatMap(shellBlocks);

describe('every documented shell command is run by a named test or marked', () => {
  it('finds the shell blocks', () => {
    expect(BLOCKS.length).toBeGreaterThan(0);
  });

  it.each(BLOCKS.map((block) => [block.where, block] as const))('%s', (_where, block) => {
    const mark = MARK.exec(block.mark ?? '');
    expect(mark, `${block.where}: no <!-- run by: ... --> or <!-- not run here: ... --> on the line before the block`).not.toBeNull();
    if (mark![1] === 'not run here') return;
    const tests = mark![2]!.split(/,\s*/);
    for (const test of tests) expect(existsSync(join(ROOT, test)), `${block.where}: ${test} exists`).toBe(true);
    const sources = tests.map((test) => readFileSync(join(ROOT, test), 'utf8')).join('\n');
    for (const command of block.commands) {
      const needed = signature(command);
      expect(needed, `${block.where}: "${command}" is not an npm script a test can be checked to run; mark the block "not run here"`).toBeDefined();
      for (const part of needed!) expect(sources, `${block.where}: "${command}": ${tests.join(', ')} never mention ${part}`).toContain(part);
    }
  });
});
