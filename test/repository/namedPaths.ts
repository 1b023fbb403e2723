/**
 * The repository paths a document or a comment names: a path from the root (`docs/api.md#errors`,
 * `infra/constructs/`), a Markdown link's target, a path beside the file that starts with a dot.
 * Read from README.md, docs/, every package's README, and the comments and test titles of every
 * module; the code itself is left out (a path the code uses fails when it runs).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';
import { ROOT, read, repositoryFiles } from './sources.ts';

export interface NamedPath {
  /** `file:line` where it is named. */
  where: string;
  /** As written. */
  named: string;
  /** Relative to the root. */
  path: string;
}

/** Extensions of the files a path may name. */
const FILE = String.raw`[\w.-]+\.(?:ts|mts|mjs|cjs|js|json|md|yml|yaml|sh|txt|html|d\.ts)`;
/** A path from the root, or beside the file when it starts with a dot. */
const PATH = new RegExp(
  String.raw`(?<![\w@.:/$<{*-])((?:\.\.?\/)*(?:[a-z][\w.-]*\/)+(?:${FILE})?|\.\.?\/${FILE}|(?:\.\.\/)+(?:[\w.-]+\/)*${FILE})(?![\w/*<{-])`,
  'g',
);
/** A Markdown link's target. */
const LINK = /\]\(([^)\s#]+)(?:#[^)]*)?\)/g;

/** Where a path may point outside the repository: installed packages and what runs write. */
const ELSEWHERE =
  /^(node_modules|cdk\.out|dist|\.data|\.watch|\.inspect|coverage|reports|test-output|tmp|proc|dev|usr|etc|home|root|var|opt|sys)\//;

/** The folders `file` is in, nearest first, the root's excluded. */
function foldersAbove(file: string): string[] {
  const folders: string[] = [];
  for (let folder = posix.dirname(file); folder !== '.'; folder = posix.dirname(folder)) folders.push(folder);
  return folders;
}

/** A path inside an installed package, named by the package (`aws-cdk-lib/core/lib/...`). */
function isPackagePath(path: string): boolean {
  const [first, second] = path.split('/');
  const name = first!.startsWith('@') ? `${first}/${second}` : first!;
  return existsSync(join(ROOT, 'node_modules', name, 'package.json'));
}

/** The text of a module a reader reads as prose: its comments and its test titles. */
function proseOf(source: string): string {
  const kept: string[] = [];
  // Not a comment inside a string (a test's made-up source): no quote right before it.
  const comment = /(?<!['"`])\/\*[\s\S]*?\*\/|(?<![:'"`\w])\/\/[^\n]*/g;
  const title = /\b(?:describe|it|test)(?:\.each\([^)]*\))?\(\s*(['"`])((?:\\.|(?!\1).)*)\1/dg;
  // Keep line numbers: everything but the prose becomes blank, lines intact.
  const marks = new Array<boolean>(source.length).fill(false);
  const mark = ([start, end]: [number, number]) => {
    for (let i = start; i < end; i++) marks[i] = true;
  };
  for (const match of source.matchAll(comment)) mark([match.index, match.index + match[0].length]);
  for (const match of source.matchAll(title)) mark(match.indices![2]!);
  for (let i = 0; i < source.length; i++) kept.push(marks[i] || source[i] === '\n' ? source[i]! : ' ');
  return kept.join('');
}

function pathsIn(file: string, text: string): NamedPath[] {
  const found: NamedPath[] = [];
  const lines = text.split('\n');
  lines.forEach((line, index) => {
    const where = `${file}:${index + 1}`;
    const links = file.endsWith('.md')
      ? [...line.matchAll(LINK)].map((m) => m[1]!).filter((target) => !/^[a-z]+:/.test(target))
      : [];
    for (const target of links)
      found.push({ where, named: target, path: posix.normalize(posix.join(posix.dirname(file), target)) });
    for (const match of line.matchAll(PATH)) {
      const named = match[1]!;
      const relative = named.startsWith('./') || named.startsWith('../');
      // A bare path is the root's, or that of a folder the file is in (`constructs/x.ts` in infra/,
      // a package's src/ named from its test/).
      const beside = posix.normalize(posix.join(posix.dirname(file), named));
      const above =
        relative || existsSync(join(ROOT, named))
          ? undefined
          : foldersAbove(file)
              .map((folder) => posix.join(folder, named))
              .find((path) => existsSync(join(ROOT, path)));
      const path = relative ? beside : (above ?? named);
      // A lone folder (`src/`) says too little to check; a package's own file is not ours.
      if (/^[\w.-]+\/$/.test(named) || ELSEWHERE.test(path) || path.startsWith('../') || isPackagePath(path)) continue;
      found.push({ where, named, path });
    }
  });
  return found;
}

/** Every path named in the documents and in the modules' prose. */
export function namedPaths(): NamedPath[] {
  const files = repositoryFiles();
  const documents = files.filter((path) => path.endsWith('.md'));
  const modules = files.filter((path) => /\.(ts|mts|mjs|cjs|js)$/.test(path) && !path.endsWith('.d.ts'));
  return [
    ...documents.flatMap((file) => pathsIn(file, read(file))),
    ...modules.flatMap((file) => pathsIn(file, proseOf(read(file)))),
  ];
}

/** Whether a named path exists: a file, or a folder when named with its slash. */
function exists({ path }: NamedPath): boolean {
  const full = join(ROOT, path);
  if (!existsSync(full)) return false;
  return path.endsWith('/') ? statSync(full).isDirectory() : true;
}

/** The paths git ignores: what a run writes (`tools/bench/results.json`), named before it exists. */
function ignoredByGit(paths: readonly string[]): Set<string> {
  const run = spawnSync('git', ['check-ignore', '--no-index', '--stdin'], {
    cwd: ROOT,
    input: paths.join('\n'),
    encoding: 'utf8',
  });
  if (run.error || (run.status !== 0 && run.status !== 1))
    throw new Error(`git check-ignore failed: ${run.error?.message ?? run.stderr}`);
  return new Set(run.stdout.split('\n').filter(Boolean));
}

/** The named paths that name nothing in the repository. */
export function missing(): NamedPath[] {
  const absent = namedPaths().filter((named) => !exists(named));
  const ignored = ignoredByGit([...new Set(absent.map(({ path }) => path))]);
  return absent.filter(({ path }) => !ignored.has(path));
}
