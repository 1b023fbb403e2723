/**
 * Every shell block of the README and docs/ says, on the line before it, whether a test runs its
 * commands (`<!-- run by: test/tools/keys/keys.test.ts, test/local/invoke.test.ts -->`), runs the block itself as written
 * (`<!-- run as written by: test/docs/walkthrough.test.ts -->`, or bench.test.ts), or why none can here
 * (`<!-- not run here: needs an AWS account -->`). A block "run by" named tests holds only npm
 * scripts, and each named script's entry file (or a module that entry runs: scripts/ are thin entry
 * points over tools/ and local/) and first argument appear in one of those tests.
 * A new block with neither mark fails, so does a "run by" that names a test which does not run it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MARK, ROOT, documentedBlocks } from './shellBlocks.ts';

const SCRIPTS = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
  .scripts;

/** The entry file and the project modules it imports: a test that runs any of them runs the command. */
function entryAndModules(entry: string): string[] {
  const text = readFileSync(join(ROOT, entry), 'utf8');
  const imported = [...text.matchAll(/^import [^'\n]*'(\.{1,2}\/[^']+)';$/gm)].map((match) =>
    relative(ROOT, join(ROOT, dirname(entry), match[1]!)),
  );
  return [entry, ...imported];
}

/** What a test must mention to run `command`: one of the npm script's entry files, and its first argument. */
function signature(command: string): string[][] | undefined {
  const words = command.replace(/^(\w+=\S*\s+)+/, '').split(/\s+/);
  const script =
    words[0] === 'npm' && words[1] === 'run'
      ? words[2]
      : words[0] === 'npm' && words[1] === 'start'
        ? 'start'
        : undefined;
  // The entry file, not a module preloaded by `--import` (local/requireNode22.mjs, the Node 22 guard).
  const entry =
    script &&
    SCRIPTS[script]?.split(/\s+/).find((word, at, words) => /\.(ts|mjs)$/.test(word) && words[at - 1] !== '--import');
  if (!entry) return undefined;
  const dashes = words.indexOf('--');
  const firstArgument = dashes < 0 ? undefined : words[dashes + 1];
  return firstArgument ? [entryAndModules(entry), [`'${firstArgument}'`]] : [entryAndModules(entry)];
}

const BLOCKS = documentedBlocks();

describe('every documented shell command is run by a named test or marked', () => {
  it('finds the shell blocks', () => {
    expect(BLOCKS.length).toBeGreaterThan(0);
  });

  it.each(BLOCKS.map((block) => [block.where, block] as const))('%s', (_where, block) => {
    const mark = MARK.exec(block.mark ?? '');
    expect(
      mark,
      `${block.where}: no <!-- run by: ... --> or <!-- not run here: ... --> on the line before the block`,
    ).not.toBeNull();
    if (mark![1] === 'not run here') return;
    // test/docs/walkthrough.test.ts runs every block so marked, and fails on one it has no runner for.
    if (mark![1] === 'run as written by')
      return expect(['test/docs/walkthrough.test.ts', 'test/docs/bench.test.ts']).toContain(mark![2]);
    const tests = mark![2]!.split(/,\s*/);
    for (const test of tests) expect(existsSync(join(ROOT, test)), `${block.where}: ${test} exists`).toBe(true);
    const sources = tests.map((test) => readFileSync(join(ROOT, test), 'utf8')).join('\n');
    for (const command of block.commands) {
      const needed = signature(command);
      expect(
        needed,
        `${block.where}: "${command}" is not an npm script a test can be checked to run; mark the block "not run here"`,
      ).toBeDefined();
      for (const anyOf of needed!) {
        expect(
          anyOf.some((part) => sources.includes(part)),
          `${block.where}: "${command}": ${tests.join(', ')} never mention ${anyOf.join(' or ')}`,
        ).toBe(true);
      }
    }
  });
});

describe('a command that holds the terminal, in a list of commands', () => {
  it('says of start:deployed, wherever commands follow it in a block, that it runs in the foreground until Ctrl-C', () => {
    const lists = BLOCKS.filter((block) => {
      const at = block.commands.findIndex((command) => command.startsWith('npm run start:deployed'));
      return at >= 0 && at < block.commands.length - 1;
    });
    expect(lists.map((block) => block.where.split(':')[0])).toEqual(
      expect.arrayContaining(['docs/deploying.md', 'docs/local-development.md']),
    );
    for (const block of lists) {
      const line = block.body.split('\n').find((text) => text.startsWith('npm run start:deployed'));
      expect(line, block.where).toMatch(/#.*\bruns in the foreground until Ctrl-C\b/);
    }
  });
});
