/**
 * The package's README stays true where a reader's claim can be checked against src/ cheaply: the
 * intrinsics and pseudo parameters it lists are the ones src/intrinsics.ts resolves (both ways), the
 * gateway response types are the ones src/gatewayResponses.ts answers (both ways), the options are
 * start:deployed's (both ways), every refusal line it quotes is one the code can print (and every
 * RestApiTemplateError message is quoted), every path it names exists, and its map names every
 * source file.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const PACKAGE = resolve(import.meta.dirname, '..');
const ROOT = resolve(PACKAGE, '../..');
const README = readFileSync(join(PACKAGE, 'README.md'), 'utf8');
const source = (file: string) => readFileSync(join(PACKAGE, 'src', file), 'utf8');
const SOURCE_FILES = readdirSync(join(PACKAGE, 'src')).filter((name) => /\.(ts|mjs)$/.test(name));

/** The README's text under a `##`/`###` heading, up to the next heading of any level. */
function section(heading: string): string {
  const lines = README.split('\n');
  const start = lines.findIndex((line) => new RegExp(`^#{2,3} ${heading}$`).test(line));
  expect(start, `README has a "${heading}" heading`).toBeGreaterThanOrEqual(0);
  const end = lines.findIndex((line, at) => at > start && /^#{1,3} /.test(line));
  return lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
}

/** The backquoted words of the README line that starts with `label`. */
function listed(text: string, label: string): string[] {
  const line = text.split('\n').find((candidate) => candidate.trimStart().startsWith(label));
  expect(line, `README has a line "${label} ..."`).toBeDefined();
  return [...line!.matchAll(/`([^`]+)`/g)].map((match) => match[1]!);
}

const sorted = (values: Iterable<string>) => [...new Set(values)].sort();

/**
 * A regular expression for what a thrown message can read: its template literal's text as is, each
 * `${...}` (braces balanced) any run of characters.
 */
function messagePattern(literal: string): RegExp {
  let pattern = '';
  for (let at = 0; at < literal.length; at++) {
    if (literal.startsWith('${', at)) {
      let depth = 0;
      let end = at + 1;
      for (; end < literal.length; end++) {
        if (literal[end] === '{') depth++;
        else if (literal[end] === '}' && --depth === 0) break;
      }
      pattern += '.+?';
      at = end;
    } else {
      const char = literal[at] === '\\' ? literal[++at]! : literal[at]!;
      pattern += char.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    }
  }
  return new RegExp(`^${pattern}$`);
}

/** The messages src/ throws in the errors a user sees as one line, by error class. */
function thrownMessages(): { kind: string; literal: string; pattern: RegExp }[] {
  const thrown =
    /new (RestApiTemplateError|TemplateResolutionError|LambdaHostError|CloudAssemblyError)\(\s*(`(?:[^`\\]|\\.)*`|'(?:[^'\\]|\\.)*')/g;
  return SOURCE_FILES.flatMap((file) =>
    [...source(file).matchAll(thrown)].map((match) => {
      const literal = match[2]!.slice(1, -1);
      return { kind: match[1]!, literal, pattern: messagePattern(literal) };
    }),
  );
}

describe('the README of @petstore/stage-emulator', () => {
  it('lists exactly the intrinsic functions and pseudo parameters src/intrinsics.ts resolves', () => {
    const intrinsics = source('intrinsics.ts');
    const handled = [
      ...(intrinsics.includes("key === 'Ref'") ? ['Ref'] : []),
      ...[...intrinsics.matchAll(/case '(Fn::\w+|Condition)'/g)].map((match) => match[1]!),
    ];
    const pseudo = [...intrinsics.matchAll(/case '(AWS::[A-Za-z]+)':/g)].map((match) => match[1]!);
    const text = section('CloudFormation intrinsics');
    expect(handled.length).toBeGreaterThan(10);
    expect(sorted(listed(text, '- Functions:'))).toEqual(sorted(handled));
    expect(sorted(listed(text, '- Pseudo parameters:'))).toEqual(sorted(pseudo));
  });

  it('lists exactly the gateway response types src/gatewayResponses.ts answers', () => {
    const table = /const DEFAULT_STATUS[^{]*\{([^}]*)\}/.exec(source('gatewayResponses.ts'))?.[1] ?? '';
    const answered = [...table.matchAll(/^\s*([A-Z0-9_]+):/gm)].map((match) => match[1]!);
    expect(answered.length).toBeGreaterThan(10);
    expect(sorted(listed(section('API Gateway \\(REST API\\)'), 'Response types:'))).toEqual(sorted(answered));
  });

  it("names every option of start:deployed's usage, and no option the commands do not take", () => {
    const usage = /export const USAGE = `([^`]*)`/.exec(source('cli.ts'))?.[1] ?? '';
    const options = (text: string) => sorted([...text.matchAll(/--[a-z][a-z-]*/g)].map((match) => match[0]));
    const text = section('Run it');
    expect(options(usage).length).toBeGreaterThan(5);
    expect(options(text)).toEqual(expect.arrayContaining(options(usage)));
    const taken = options(`${usage} ${readFileSync(join(ROOT, 'local', 'invoke.ts'), 'utf8')}`);
    expect(options(text).filter((option) => !taken.includes(option))).toEqual([]);
  });

  describe('its refusal lines', () => {
    const block = /```text\n([\s\S]*?)```/.exec(section('What it refuses'))?.[1] ?? '';
    const lines = block.split('\n').filter(Boolean);
    const messages = thrownMessages();

    it('are what start:deployed prints for a one-line error', () => {
      expect(source('cli.ts')).toContain('console.error(`start:deployed: ${isOneLineError(error) ? error.message');
      expect(lines.length).toBeGreaterThan(10);
      for (const line of lines) expect(line.startsWith('start:deployed: '), line).toBe(true);
    });

    it('each match a message src/ throws', () => {
      expect(messages.length).toBeGreaterThan(20);
      const unknown = lines.filter(
        (line) => !messages.some(({ pattern }) => pattern.test(line.slice('start:deployed: '.length))),
      );
      expect(unknown, 'quoted lines no message in src/ can print').toEqual([]);
    });

    it('quote every RestApiTemplateError, the refusal of a REST API outside the subset', () => {
      const templateErrors = messages.filter(({ kind }) => kind === 'RestApiTemplateError');
      expect(templateErrors.length).toBeGreaterThan(5);
      const unquoted = templateErrors.filter(
        ({ pattern }) => !lines.some((line) => pattern.test(line.slice('start:deployed: '.length))),
      );
      expect(
        unquoted.map(({ literal }) => literal),
        'RestApiTemplateError messages the README does not quote',
      ).toEqual([]);
    });
  });

  it('names only paths that exist, and links only to files that exist', () => {
    const named = [...README.matchAll(/`((?:src|test|infra|local|lib|functions|docs|events)\/[\w./-]*)`/g)].map(
      (match) => match[1]!,
    );
    const linked = [...README.matchAll(/\]\((\.[^)#\s]+)(?:#[^)]*)?\)/g)].map((match) => resolve(PACKAGE, match[1]!));
    expect(named.length).toBeGreaterThan(20);
    const missing = [
      ...named.filter((path) => !existsSync(join(PACKAGE, path)) && !existsSync(join(ROOT, path))),
      ...linked.filter((path) => !existsSync(path)),
    ];
    expect(missing).toEqual([]);
  });
});
